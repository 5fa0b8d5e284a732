import crypto from 'node:crypto';
import type { App } from '../routes/app-type.ts';
import { brandedPage, PAGE_HEADERS, type PageBrand } from './layout.ts';

/**
 * GET /chat: the chat page. It is served before anyone knows whose it is: the session token
 * rides in the URL fragment (`/chat#token=…`), which browsers never send to a server, and the
 * page's script reads the reseller's brand from GET /v1/chat/session with the token as a Bearer
 * header, then posts each message to /v1/chat. The thread lives in the browser tab only
 * (sessionStorage) and goes back with every message as `history`. Nothing on the page names the
 * service or any supplier.
 */

const NEUTRAL: PageBrand = { name: 'Sales coach', logoUrl: null, primaryColor: '#1f2937', accentColor: '#2563eb', supportEmail: null };
/** History entries the page sends: the ones the assistant reads (spec: last 12 turns). */
const HISTORY_SENT = 12;

/**
 * The page's words in the customer's calling language (`calling_language` of GET
 * /v1/chat/session): the five languages customers' sites and onboarding pages have, English for
 * any other and until the session is read. `{brand}`, `{name}` and `{business}` are the reseller's
 * and the person's own words, shown as given.
 */
export const CHAT_WORDS = {
  en: {
    title: 'Sales coach',
    greeting: 'Your sales coach from {brand}',
    greetingNamed: 'Hi {name}, your sales coach from {brand}',
    intro: 'Ask about {business}’s calling results of the last 30 days, or for advice on your next calls. You are talking to an AI assistant; nothing you write here is stored.',
    label: 'Your message',
    send: 'Send',
    thinking: 'Thinking…',
    ended: 'This chat has ended. Ask {brand} for a new link.',
    exhausted: 'This chat has reached its message limit. Ask {brand} for a new link.',
    unavailable: 'The assistant is not available right now. Please contact {brand}.',
    tooLong: 'That message is too long; please shorten it.',
    empty: 'Type a message first.',
    failed: 'The assistant could not answer just now. Please try again.',
  },
  de: {
    title: 'Verkaufscoach',
    greeting: 'Ihr Verkaufscoach von {brand}',
    greetingNamed: 'Hallo {name}, Ihr Verkaufscoach von {brand}',
    intro: 'Fragen Sie nach den Anrufergebnissen von {business} der letzten 30 Tage oder nach Rat für Ihre nächsten Anrufe. Sie sprechen mit einem KI-Assistenten; nichts, was Sie hier schreiben, wird gespeichert.',
    label: 'Ihre Nachricht',
    send: 'Senden',
    thinking: 'Einen Moment …',
    ended: 'Dieser Chat ist beendet. Bitten Sie {brand} um einen neuen Link.',
    exhausted: 'Dieser Chat hat sein Nachrichtenlimit erreicht. Bitten Sie {brand} um einen neuen Link.',
    unavailable: 'Der Assistent ist gerade nicht verfügbar. Bitte wenden Sie sich an {brand}.',
    tooLong: 'Diese Nachricht ist zu lang; bitte kürzen Sie sie.',
    empty: 'Schreiben Sie zuerst eine Nachricht.',
    failed: 'Der Assistent konnte gerade nicht antworten. Bitte versuchen Sie es noch einmal.',
  },
  fr: {
    title: 'Coach commercial',
    greeting: 'Votre coach commercial de {brand}',
    greetingNamed: 'Bonjour {name}, votre coach commercial de {brand}',
    intro: 'Interrogez-moi sur les résultats d’appel de {business} des 30 derniers jours, ou demandez conseil pour vos prochains appels. Vous parlez à un assistant IA\u00a0; rien de ce que vous écrivez ici n’est conservé.',
    label: 'Votre message',
    send: 'Envoyer',
    thinking: 'Réflexion…',
    ended: 'Cette conversation est terminée. Demandez un nouveau lien à {brand}.',
    exhausted: 'Cette conversation a atteint sa limite de messages. Demandez un nouveau lien à {brand}.',
    unavailable: 'L’assistant n’est pas disponible pour le moment. Contactez {brand}.',
    tooLong: 'Ce message est trop long\u00a0; raccourcissez-le.',
    empty: 'Écrivez d’abord un message.',
    failed: 'L’assistant n’a pas pu répondre. Réessayez.',
  },
  es: {
    title: 'Coach de ventas',
    greeting: 'Su coach de ventas de {brand}',
    greetingNamed: 'Hola, {name}: su coach de ventas de {brand}',
    intro: 'Pregunte por los resultados de llamadas de {business} de los últimos 30 días o pida consejo para sus próximas llamadas. Está hablando con un asistente de IA; nada de lo que escriba aquí se guarda.',
    label: 'Su mensaje',
    send: 'Enviar',
    thinking: 'Pensando…',
    ended: 'Este chat ha terminado. Pida a {brand} un enlace nuevo.',
    exhausted: 'Este chat ha alcanzado su límite de mensajes. Pida a {brand} un enlace nuevo.',
    unavailable: 'El asistente no está disponible ahora. Póngase en contacto con {brand}.',
    tooLong: 'El mensaje es demasiado largo; acórtelo, por favor.',
    empty: 'Escriba primero un mensaje.',
    failed: 'El asistente no ha podido responder. Inténtelo de nuevo.',
  },
  nl: {
    title: 'Verkoopcoach',
    greeting: 'Uw verkoopcoach van {brand}',
    greetingNamed: 'Hallo {name}, uw verkoopcoach van {brand}',
    intro: 'Vraag naar de belresultaten van {business} van de afgelopen 30 dagen, of om advies voor uw volgende gesprekken. U praat met een AI-assistent; niets wat u hier schrijft wordt bewaard.',
    label: 'Uw bericht',
    send: 'Versturen',
    thinking: 'Even denken…',
    ended: 'Deze chat is beëindigd. Vraag {brand} om een nieuwe link.',
    exhausted: 'Deze chat heeft zijn berichtenlimiet bereikt. Vraag {brand} om een nieuwe link.',
    unavailable: 'De assistent is nu niet beschikbaar. Neem contact op met {brand}.',
    tooLong: 'Dit bericht is te lang; maak het korter.',
    empty: 'Typ eerst een bericht.',
    failed: 'De assistent kon nu niet antwoorden. Probeer het opnieuw.',
  },
} as const;

const STYLE = `<style>
  main { max-width: 44rem; }
  #thread { list-style: none; padding: 0; margin: 0 0 1rem; display: flex; flex-direction: column; gap: .6rem; min-height: 6rem; }
  #thread li { padding: .6rem .85rem; border-radius: 10px; max-width: 85%; white-space: pre-wrap; line-height: 1.4; }
  #thread li.user { align-self: flex-end; background: var(--accent); color: var(--on-accent); }
  #thread li.assistant { align-self: flex-start; background: #f1f5f9; color: #1c1917; }
  #ask textarea { width: 100%; box-sizing: border-box; min-height: 4.5rem; padding: .6rem; font: inherit; }
  #ask button:disabled { opacity: .5; cursor: default; }
  #status { color: #57534e; font-size: .9rem; min-height: 1.2rem; }
  #status.error { color: #b91c1c; }
</style>`;

const BODY = (nonce: string) => `${STYLE}
<h2 id="greeting">Your sales coach</h2>
<p class="notice" id="intro">Ask about your calling results of the last 30 days, or for advice on your next calls. You are talking to an AI assistant.</p>
<ol id="thread" aria-live="polite"></ol>
<form id="ask">
<label for="message">Your message</label>
<textarea id="message" name="message" maxlength="4000" required disabled></textarea>
<button type="submit" id="send" disabled>Send</button>
</form>
<p id="status" role="status">Opening your chat…</p>
<script nonce="${nonce}">
(() => {
  'use strict';
  const TOKEN_KEY = 'coach.token';
  const THREAD_KEY = 'coach.thread';
  const $ = (id) => document.getElementById(id);
  const thread = $('thread'), form = $('ask'), input = $('message'), send = $('send'), status = $('status');
  let brandName = 'your provider';
  const WORDS = ${JSON.stringify(CHAT_WORDS)};
  let words = WORDS.en;
  const fill = (text, values) => text.replace(/\\{(\\w+)\\}/g, (slot, name) => (name in values ? values[name] : slot));
  const w = (key, values) => fill(words[key], Object.assign({ brand: brandName }, values || {}));
  /** The customer's calling language (fr-FR → fr) when the page has its words; English otherwise. */
  function speak(locale) {
    const lang = String(locale || 'en').split(/[-_]/)[0].toLowerCase();
    words = Object.prototype.hasOwnProperty.call(WORDS, lang) ? WORDS[lang] : WORDS.en;
    document.documentElement.lang = Object.prototype.hasOwnProperty.call(WORDS, lang) ? lang : 'en';
    document.querySelector('label[for=message]').textContent = words.label;
    send.textContent = words.send;
  }

  // The token arrives in the fragment once, is kept for this tab only, and leaves the address bar.
  const fragment = new URLSearchParams(location.hash.slice(1));
  let token = fragment.get('token');
  if (token) {
    if (sessionStorage.getItem(TOKEN_KEY) !== token) sessionStorage.removeItem(THREAD_KEY);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname);
  } else {
    token = sessionStorage.getItem(TOKEN_KEY);
  }
  let turns = [];
  try { turns = JSON.parse(sessionStorage.getItem(THREAD_KEY) || '[]'); } catch { turns = []; }

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? 'error' : '';
  }
  function show(role, content) {
    const li = document.createElement('li');
    li.className = role;
    li.textContent = content;
    thread.appendChild(li);
    li.scrollIntoView({ block: 'end' });
  }
  function ready(on) {
    input.disabled = !on;
    send.disabled = !on;
    if (on) input.focus();
  }
  function ended(text) {
    ready(false);
    say(text, true);
  }
  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: Object.assign({ authorization: 'Bearer ' + token }, body ? { 'content-type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'omit',
    });
    let data = null;
    try { data = await res.json(); } catch { data = null; }
    return { status: res.status, data };
  }
  function explain(res) {
    const code = res.data && res.data.error && res.data.error.code;
    if (res.status === 401) return ended(w('ended'));
    if (code === 'session_exhausted') return ended(w('exhausted'));
    if (code === 'insufficient_balance') return ended(w('unavailable'));
    if (code === 'message_too_long') return say(w('tooLong'), true);
    if (code === 'message_required') return say(w('empty'), true);
    say(w('failed'), true);
  }
  function brand(b) {
    brandName = b.display_name;
    const root = document.documentElement.style;
    root.setProperty('--primary', b.primary_color);
    root.setProperty('--accent', b.accent_color);
    root.setProperty('--on-primary', b.text_on_primary_color);
    root.setProperty('--on-accent', b.text_on_accent_color);
    document.querySelector('header h1').textContent = b.display_name;
    document.title = words.title + ' · ' + b.display_name;
    if (b.logo_url) {
      const img = document.createElement('img');
      img.className = 'logo';
      img.alt = b.display_name;
      img.src = b.logo_url;
      document.querySelector('header').prepend(img);
    }
  }

  async function start() {
    if (!token) return ended('This page needs the chat link you were sent. Ask your provider for one.');
    const res = await api('GET', '/v1/chat/session');
    if (res.status !== 200) return explain(res);
    const c = res.data;
    speak(c.calling_language);
    brand(c.brand);
    $('greeting').textContent = c.display_name ? w('greetingNamed', { name: c.display_name }) : w('greeting');
    $('intro').textContent = w('intro', { business: c.business });
    for (const t of turns) show(t.role, t.content);
    if (c.messages_sent >= c.message_limit) return explain({ status: 429, data: { error: { code: 'session_exhausted' } } });
    say('');
    ready(true);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const message = input.value.trim();
    if (!message) return say(w('empty'), true);
    ready(false);
    say(w('thinking'));
    show('user', message);
    const res = await api('POST', '/v1/chat', { message, history: turns.slice(-${HISTORY_SENT}) }).catch(() => ({ status: 0, data: null }));
    if (res.status !== 200) {
      thread.lastChild && thread.removeChild(thread.lastChild);
      input.value = message;
      explain(res);
      if (res.status === 0 || res.status >= 500 || res.status === 400) ready(true);
      return;
    }
    turns.push({ role: 'user', content: message }, { role: 'assistant', content: res.data.reply });
    sessionStorage.setItem(THREAD_KEY, JSON.stringify(turns));
    show('assistant', res.data.reply);
    input.value = '';
    say('');
    ready(true);
  });

  start().catch(() => say('The chat could not be opened. Check your connection and reload.', true));
})();
</script>`;

/** The page's own policy: its one inline script by nonce, calls to this origin only, https images. */
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'unsafe-inline'",
    'img-src https:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function registerChatPage(app: App): void {
  app.get('/chat', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) => {
    const nonce = crypto.randomBytes(16).toString('base64');
    return reply
      .code(200)
      .headers({ ...PAGE_HEADERS, 'content-security-policy': contentSecurityPolicy(nonce) })
      .send(brandedPage(NEUTRAL, 'Chat', BODY(nonce)));
  });
}
