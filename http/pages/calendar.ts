import formbody from '@fastify/formbody';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../routes/app-type.ts';
import type { CalendarPage, OpenedCalendarLink } from '../../actors/customer/calendar-page.ts';
import type { CustomerRegistry } from '../routes/deps.ts';
import type { CalendarCredentials } from '../../calendars/calendar.ts';
import { pageBrand } from '../../actors/account/views.ts';
import { isRefusal } from '../../runtime/refusal.ts';
import { brandedPage, escapeHtml, type PageBrand } from './layout.ts';
import { calendarWords, localReason } from './calendar-words.ts';
import { fill } from './onboarding-words.ts';
import { send as sendPage, unreadableBody } from './onboarding.ts';
import { Type } from '../schemas/common.ts';
import { clientWentAway } from '../plugins/error-boundary.ts';
import { isApiError } from '../errors.ts';

const NEUTRAL: PageBrand = { name: 'Calendar', logoUrl: null, primaryColor: '#1f2937', accentColor: '#2563eb', supportEmail: null };
const MAX_FIELD = 500;
/**
 * Connection attempts with an address, user name and password, per link and hour: the page must
 * not become a way to try passwords against someone's calendar server (or to make the service ask
 * many servers) from our addresses. Counted in the rate limit's store (shared with several API processes).
 */
export const CALDAV_ATTEMPTS_PER_HOUR = 10;
export const CALENDAR_OAUTH_CALLBACK = '/calendar/oauth/callback';

/** What these pages use. */
export interface CalendarPageRouteDeps {
  customers: CustomerRegistry;
  calendarPage: CalendarPage;
}

/** Styles of this page beyond the shared layout's (inline: the page's CSP allows only inline styles). */
const STYLE = `<style>
  input[type=url], input[type=password] { width: 100%; padding: .6rem; font-size: 1rem; box-sizing: border-box; }
  .hint { color: #57534e; font-size: .9rem; margin: .25rem 0 0; }
  .choices { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
  .choice { display: inline-block; background: var(--accent); color: var(--on-accent); padding: .75rem 1.25rem; border-radius: 6px; text-decoration: none; font-weight: 600; }
  .error { background: #fef2f2; color: #7f1d1d; border: 1px solid #fecaca; border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
  .error h3 { margin: 0 0 .25rem; font-size: 1rem; }
  .connected { background: #f0fdf4; color: #14532d; border: 1px solid #bbf7d0; border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
  .connected h3 { margin: 0 0 .25rem; font-size: 1rem; }
  h3 { margin-top: 1.75rem; }
</style>`;

interface Shown {
  /** A refusal to show in place, for the customer. */
  error?: string;
  /** What the customer typed (never the password), to fill the form again. */
  typed?: { url: string; username: string };
}

function wordsOf(o: OpenedCalendarLink, brand: PageBrand) {
  const { lang, words } = calendarWords(o.locale);
  const names = { business: escapeHtml(o.customer.brand_name ?? o.customer.name), customer: escapeHtml(o.customer.name), brand: escapeHtml(brand.name) };
  return { lang, words, names, page: (title: string, html: string) => brandedPage(brand, title, STYLE + html, lang) };
}

function stateMessage(o: OpenedCalendarLink, brand: PageBrand): { status: number; html: string } | null {
  const { words, names, page } = wordsOf(o, brand);
  if (o.state === 'replaced') return { status: 410, html: page(words.replacedTitle, `<h2>${words.replacedTitle}</h2><p class="notice">${fill(words.replacedText, names)}</p>`) };
  if (o.state === 'expired') return { status: 410, html: page(words.expiredTitle, `<h2>${words.expiredTitle}</h2><p class="notice">${fill(words.expiredText, names)}</p>`) };
  return null;
}

/** The connect page of an active link: the connection as it stands, then the ways to connect. */
function connectPage(o: OpenedCalendarLink, brand: PageBrand, token: string, shown: Shown = {}): string {
  const { lang, words, names, page } = wordsOf(o, brand);
  const c = o.connection;
  const label = escapeHtml(c.kind === 'simulated' ? words.testCalendar : c.label);
  const status =
    c.status === 'working'
      ? `<div class="connected" role="status"><h3>${words.connectedHeading}</h3><p>${fill(words.connectedText, { label })}</p><p>${words.replaceText}</p></div>`
      : c.status === 'failing'
        ? `<div class="error" role="status"><p>${fill(words.failingText, { label, reason: escapeHtml(localReason(lang, c.failure?.message ?? '')) })}</p></div>`
        : '';
  const error = shown.error ? `<div class="error" role="alert"><h3>${words.errorHeading}</h3><p>${escapeHtml(localReason(lang, shown.error))}</p></div>` : '';
  const base = `/calendar/${encodeURIComponent(token)}`;
  let ways: string;
  if (o.customer.mode === 'test') {
    ways = `<p class="notice">${words.testNote}</p>
<form method="post" action="${base}"><input type="hidden" name="connect" value="test"><button type="submit">${words.testButton}</button></form>`;
  } else {
    const oauth = o.oauth.length
      ? `<div class="choices">${o.oauth.map((k) => `<a class="choice" href="${base}/oauth/${k}">${k === 'google' ? words.google : words.microsoft}</a>`).join('')}</div>`
      : '';
    ways = `${oauth}
<h3>${words.otherHeading}</h3>
<p>${words.otherHelp}</p>
<form method="post" action="${base}" autocomplete="off">
<input type="hidden" name="connect" value="caldav">
<label for="url">${words.addressLabel}</label>
<input type="url" id="url" name="url" maxlength="${MAX_FIELD}" required value="${escapeHtml(shown.typed?.url ?? '')}" aria-describedby="url-hint">
<p class="hint" id="url-hint">${words.addressHint}</p>
<label for="username">${words.userLabel}</label>
<input type="text" id="username" name="username" maxlength="${MAX_FIELD}" required autocomplete="username" value="${escapeHtml(shown.typed?.username ?? '')}">
<label for="password">${words.passwordLabel}</label>
<input type="password" id="password" name="password" maxlength="${MAX_FIELD}" required autocomplete="new-password" aria-describedby="password-hint">
<p class="hint" id="password-hint">${words.passwordHint}</p>
<button type="submit">${words.connectButton}</button>
</form>`;
  }
  return page(words.title, `<h2>${fill(words.heading, names)}</h2>
${error}${status}
<p>${fill(words.intro, names)}</p>
${ways}`);
}

/** The result page of an OAuth round trip (the callback knows the link, not its token: no form here). */
function resultPage(o: OpenedCalendarLink, brand: PageBrand, outcome: { connectedLabel: string } | { error: string }): string {
  const { words, names, page } = wordsOf(o, brand);
  if ('connectedLabel' in outcome) {
    return page(words.connectedHeading, `<h2>${fill(words.heading, names)}</h2>
<div class="connected" role="status"><h3>${words.connectedHeading}</h3><p>${fill(words.connectedText, { label: escapeHtml(outcome.connectedLabel) })}</p></div>`);
  }
  return page(words.errorHeading, `<h2>${fill(words.heading, names)}</h2>
<div class="error" role="alert"><h3>${words.errorHeading}</h3><p>${escapeHtml(outcome.error)}</p></div>
<p>${words.openAgain}</p>`);
}

const invalidPage = (reply: FastifyReply) =>
  sendPage(reply, 404, brandedPage(NEUTRAL, 'Link not valid', `<h2>This link is not valid</h2><p class="notice">Check that you copied the whole link, or ask for a new one.</p>`));

/**
 * A form sent from another site is refused: the browser says where it came from (Sec-Fetch-Site,
 * else an Origin naming another host). The token in the path is the capability, as on the
 * onboarding page; this closes the cross-site post of a form to a link someone learnt. The page's
 * no-referrer policy makes browsers send `Origin: null` for its own forms, so null says nothing.
 */
function fromAnotherSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = request.headers.origin;
  if (!origin || origin === 'null') return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

/** Connects through the customer actor; a refused check comes back as the reason to show. */
async function connect(services: CalendarPageRouteDeps, o: OpenedCalendarLink, credentials: CalendarCredentials): Promise<{ error: string } | { label: string | null }> {
  try {
    return { label: (await services.customers.ask(o.customer.id, { type: 'calendar_connect', credentials })).label };
  } catch (err) {
    // The heading already says it could not be connected: the reason alone, as a sentence.
    if (isRefusal(err) && err.code === 'calendar_connection_failed') return { error: sentence((err.explanation ?? err.message).replace(/^The calendar could not be connected: /, '')) };
    throw err;
  }
}

/** A reason as a sentence: capital first letter, a full stop. */
function sentence(text: string): string {
  const t = text.trim().replace(/\.+$/, '');
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}.`;
}

function field(form: Record<string, unknown>, name: string): string {
  const v = form[name];
  return typeof v === 'string' ? v.trim() : '';
}

/** The calendar link page (issue 24): the customer connects its calendar. */
export async function registerCalendarPages(app: App, services: CalendarPageRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 16 * 1024 });
    // People get a page, never a JSON error or a stack trace.
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (clientWentAway(err, request)) return reply.code(400).send();
      const unreadable = unreadableBody(err);
      if (unreadable) return sendPage(reply, unreadable.status, brandedPage(NEUTRAL, 'Not accepted', `<h2>Not accepted</h2><p class="notice">${escapeHtml(unreadable.text)}</p>`));
      if (isApiError(err) && err.status < 500) {
        return sendPage(reply, err.status, brandedPage(NEUTRAL, 'Not accepted', `<h2>Not accepted</h2><p class="notice">What was sent could not be read. Open the link again and use the form.</p>`));
      }
      request.log.error({ err }, 'calendar page failed');
      return sendPage(reply, 500, brandedPage(NEUTRAL, 'Something went wrong', `<h2>Something went wrong</h2><p class="notice">Nothing was changed. Try again in a moment.</p>`));
    });
    const typed = scope as unknown as App;
    const params = Type.Object({ token: Type.String({ maxLength: 100 }) });
    const attempts = scope.createRateLimit({
      timeWindow: 3_600_000,
      max: CALDAV_ATTEMPTS_PER_HOUR,
      keyGenerator: (request) => `calendar-connect:${(request as FastifyRequest & { calendarLinkId?: string }).calendarLinkId ?? ''}`,
    });

    typed.get(
      CALENDAR_OAUTH_CALLBACK,
      {
        config: { auth: 'none' },
        schema: {
          hide: true,
          querystring: Type.Object({
            state: Type.Optional(Type.String({ maxLength: 500 })),
            code: Type.Optional(Type.String({ maxLength: 4000 })),
            error: Type.Optional(Type.String({ maxLength: 200 })),
          }),
        },
      },
      async (request, reply) => {
        const { state, code, error } = request.query as { state?: string; code?: string; error?: string };
        if (!state) return invalidPage(reply);
        // Consent refused at the provider (`error`, no code): the state is used up all the same; nothing is connected.
        const finished = await services.calendarPage.finishOAuth(state, error || !code ? null : code);
        if (!finished) return invalidPage(reply);
        const brand = pageBrand(finished.opened.account);
        const { words } = wordsOf(finished.opened, brand);
        if ('denied' in finished) return sendPage(reply, 400, resultPage(finished.opened, brand, { error: words.deniedText }));
        if ('failure' in finished) return sendPage(reply, 422, resultPage(finished.opened, brand, { error: sentence(finished.failure) }));
        const outcome = await connect(services, finished.opened, finished.credentials);
        if ('error' in outcome) return sendPage(reply, 422, resultPage(finished.opened, brand, outcome));
        return sendPage(reply, 200, resultPage(finished.opened, brand, { connectedLabel: outcome.label ?? '' }));
      },
    );

    typed.get('/calendar/:token', { config: { auth: 'none' }, schema: { hide: true, params } }, async (request, reply) => {
      const opened = await services.calendarPage.open(request.params.token);
      if (!opened) return invalidPage(reply);
      const brand = pageBrand(opened.account);
      const message = stateMessage(opened, brand);
      if (message) return sendPage(reply, message.status, message.html);
      return sendPage(reply, 200, connectPage(opened, brand, request.params.token));
    });

    typed.get(
      '/calendar/:token/oauth/:kind',
      { config: { auth: 'none' }, schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 100 }), kind: Type.String({ maxLength: 20 }) }) } },
      async (request, reply) => {
        const opened = await services.calendarPage.open(request.params.token);
        if (!opened) return invalidPage(reply);
        const brand = pageBrand(opened.account);
        const message = stateMessage(opened, brand);
        if (message) return sendPage(reply, message.status, message.html);
        const kind = request.params.kind;
        const to = kind === 'google' || kind === 'microsoft' ? await services.calendarPage.startOAuth(opened.link, kind) : null;
        if (!to) return invalidPage(reply);
        return reply.code(303).header('location', to).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
      },
    );

    typed.post('/calendar/:token', { config: { auth: 'none' }, schema: { hide: true, params } }, async (request, reply) => {
      const opened = await services.calendarPage.open(request.params.token);
      if (!opened) return invalidPage(reply);
      const brand = pageBrand(opened.account);
      const message = stateMessage(opened, brand);
      if (message) return sendPage(reply, message.status, message.html);
      if (fromAnotherSite(request)) return sendPage(reply, 403, brandedPage(brand, 'Not accepted', `<h2>Not accepted</h2><p class="notice">Open the link again and use the form on its page.</p>`));
      const { words } = wordsOf(opened, brand);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const token = request.params.token;
      let credentials: CalendarCredentials;
      const typedIn = { url: field(form, 'url').slice(0, MAX_FIELD), username: field(form, 'username').slice(0, MAX_FIELD) };
      if (opened.customer.mode === 'test' && form.connect === 'test') {
        credentials = { kind: 'simulated', calendarId: opened.customer.id };
      } else if (opened.customer.mode === 'live' && form.connect === 'caldav') {
        const password = typeof form.password === 'string' ? form.password : '';
        const url = typedIn.url;
        // The lengths as sent: a field cut to fit (for showing it again) would connect an address or user other than the one typed.
        const tooLong = [field(form, 'url'), field(form, 'username'), password].some((v) => v.length > MAX_FIELD);
        if (!url || !typedIn.username || !password || tooLong) {
          return sendPage(reply, 400, connectPage(opened, brand, token, { error: words.missingFields, typed: typedIn }));
        }
        // Everything filled in but an address that is not a web address: say so, not "fill in".
        if (!/^https?:\/\/[^/?#\s]/i.test(url)) return sendPage(reply, 400, connectPage(opened, brand, token, { error: words.addressForm, typed: typedIn }));
        (request as FastifyRequest & { calendarLinkId?: string }).calendarLinkId = opened.link.id;
        if (((await attempts(request)) as { isExceeded?: boolean }).isExceeded) {
          return sendPage(reply, 429, connectPage(opened, brand, token, { error: words.tooManyAttempts, typed: typedIn }));
        }
        credentials = { kind: 'caldav', url, username: typedIn.username, password };
      } else {
        return sendPage(reply, 400, connectPage(opened, brand, token));
      }
      const outcome = await connect(services, opened, credentials);
      if ('error' in outcome) return sendPage(reply, 422, connectPage(opened, brand, token, { error: outcome.error, typed: typedIn }));
      // Post/redirect/get: the page shows the connection as it now stands.
      return reply.code(303).header('location', `/calendar/${encodeURIComponent(token)}`).header('cache-control', 'no-store').send();
    });
  });
}
