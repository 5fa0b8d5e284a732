/**
 * The output filter: every reply of the assistant passes through here, whatever the model wrote,
 * so no supplier of the reseller is ever named to its customers. Pure. Each supplier name becomes
 * the reseller's platform name, a proper noun that reads in any sentence ("runs on Twilio" →
 * "runs on Northwind Calls", "an OpenAI model" → "a Northwind Calls model").
 */

/**
 * Names no ordinary word contains: caught anywhere, and the whole word around them goes
 * ("Twilio-based" keeps "-based", "OpenAIs" goes entirely), so gluing text on cannot smuggle one
 * through. Regex sources, case-insensitive.
 */
const DISTINCTIVE: string[] = [
  // the platform itself
  'switchboard',
  // AI and speech
  'openai',
  'chatgpt',
  'deepmind',
  'huggingface',
  'elevenlabs',
  'deepgram',
  'assemblyai',
  // telephony
  'twilio',
  'vonage',
  'nexmo',
  'plivo',
  'telnyx',
  'signalwire',
  'messagebird',
  'ringcentral',
  // hosting
  'vercel',
  'heroku',
  'cloudflare',
  'netlify',
  'supabase',
  'digitalocean',
  'hetzner',
];

/**
 * Names that are, or sit inside, ordinary words (Claudette, googly, philanthropic): matched as
 * whole words only. Words that are ordinary English (whisper, bedrock, cohere) are matched only with
 * their maker's name in front.
 */
const WHOLE_WORDS: string[] = [
  // the distinctive names written in two words ("open air" and "hugging faces" stay)
  'switch[\\s-]board',
  'open[\\s-]ai',
  'chat[\\s-]gpt',
  'hugging[\\s-]face',
  'eleven[\\s-]labs',
  'assembly[\\s-]ai',
  'digital[\\s-]ocean',
  // inside ordinary words: philanthropic, Cartesian
  'anthropic',
  'cartesia',
  'azure\\s+open[\\s-]?ai',
  'gpt(?:[\\s-]?\\d+(?:\\.\\d+)?[a-z]*|[\\s-]realtime)?(?:[\\s-](?:turbo|mini|nano|realtime|preview))*',
  'dall[\\s-]?e(?:[\\s-]?\\d)?',
  'claude(?:[\\s-]\\d+(?:\\.\\d+)?)?(?:[\\s-](?:opus|sonnet|haiku))?',
  'google(?:\\s+(?:gemini|bard|cloud(?:\\s+platform)?))?',
  'gemini',
  'mistral(?:\\s+ai)?',
  'meta\\s+(?:ai|llama)',
  'llama[\\s-]?\\d+(?:\\.\\d+)?',
  'xai',
  'amazon\\s+(?:web\\s+services|bedrock|polly|lex|connect)',
  'vertex\\s+ai',
  '(?:microsoft|github)\\s+(?:azure|copilot)',
  'aws',
  'azure',
  'microsoft',
  'gcp',
  'sinch',
  'bandwidth\\.com',
  'fly\\.io',
  'linode',
  'akamai',
  'oracle\\s+cloud',
  'ovh(?:cloud)?',
  'play\\.?ht',
];

const WORD = '[\\p{L}\\p{N}_]';
// Longest first, so "Azure OpenAI" and "Google Cloud" are one name rather than two.
const longestFirst = (sources: string[]) => [...sources].sort((a, b) => b.length - a.length).join('|');
const PATTERN = new RegExp(
  `${WORD}*(?:${longestFirst(DISTINCTIVE)})${WORD}*|(?<!${WORD})(?:${longestFirst(WHOLE_WORDS)})(?!${WORD})`,
  'giu',
);

/** Stands for the brand while the text is worked on: a private-use character, neither letter nor digit. */
const BRAND = '\u{E000}';
/** Private-use characters from here on stand for kept spans (one each), restored verbatim at the end. */
const KEPT_BASE = 0xe100;
const KEPT = /[\u{E100}-\u{F8FF}]/gu;
/** The brand several times in a row ("OpenAI / Azure", "ChatGPT (GPT-4o by OpenAI)") → one brand. */
const RUN = new RegExp(`${BRAND}(?:\\s*(?:[/,&+]|-|and|or|on|in|at|via|through|over|using|with|by|from)?\\s*${BRAND}|\\s*\\(\\s*${BRAND}\\s*\\))+`, 'gu');

/** URLs (with a scheme or www.), email addresses and bare host names ("callpilot.example"). */
const ADDRESS = new RegExp(
  [
    /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/u.source,
    /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/u.source,
    // Lower-case top-level domain only, so "Twilio.The" (a missing space) is not a host.
    /(?<![\p{L}\p{N}_@.-])(?:[\p{L}\p{N}-]+\.)+[a-z]{2,}(?![\p{L}\p{N}_-])/u.source,
  ].join('|'),
  'gu',
);

/** The reseller, as the filter knows it. */
export interface FilterBrand {
  /** What a supplier's name becomes: the brand's display name, else the account name. */
  name: string;
  /** The brand's other words, kept exactly as written even when they contain a supplier's. */
  emailFromName?: string | null;
  /** The domain customers use the reseller at; URLs, addresses and hosts under it are the reseller's own. */
  domain?: string | null;
  supportEmail?: string | null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` as a whole word or words, case-insensitively: "Acme" is not found in "Acmeville". */
function wordPattern(text: string): RegExp {
  const edge = (c: string) => new RegExp(WORD, 'u').test(c);
  return new RegExp(`${edge(text[0]) ? `(?<!${WORD})` : ''}${escapeRegExp(text)}${edge(text.at(-1)!) ? `(?!${WORD})` : ''}`, 'giu');
}

/** The host of a URL, address or host name, lower-case, without `www.`, port or path. */
function hostOf(address: string): string {
  const at = address.lastIndexOf('@');
  const rest = at >= 0 ? address.slice(at + 1) : address.replace(/^[a-z]+:\/\//i, '');
  return rest.split(/[/:?#]/)[0].replace(/^www\./i, '').replace(/\.+$/, '').toLowerCase();
}

/** The hosts that are the reseller's own: its domain and its support address's, with their subdomains. */
function ownHosts(brand: FilterBrand): string[] {
  return [brand.domain, brand.supportEmail].filter((v): v is string => !!v?.trim()).map((v) => hostOf(v.trim())).filter(Boolean);
}

const isOwn = (host: string, own: string[]) => own.some((o) => host === o || host.endsWith(`.${o}`));

/** True when `text` names a supplier (the filter would change it). */
export function namesSupplier(text: string): boolean {
  return new RegExp(PATTERN.source, PATTERN.flags).test(text);
}

/**
 * `text` with every supplier name replaced by the reseller's brand name. What is the reseller's
 * own comes through exactly as written, even when it contains a word that looks like a supplier's
 * ("Gemini Growth", help@gemini-growth.example): its email_from_name, domain and support email,
 * and every URL, address and host under its domains. Any other URL or address is one unit: kept
 * whole when it names no supplier, replaced whole by the brand when it does (never half-rewritten
 * into a link that goes nowhere). The brand's display name itself, met as whole words in any case,
 * comes out in the brand's own spelling.
 */
export function scrubSuppliers(text: string, reseller: FilterBrand | string): string {
  const brand = typeof reseller === 'string' ? { name: reseller } : reseller;
  const name = brand.name.trim() || 'our platform';
  const own = ownHosts(brand);
  const kept: string[] = [];
  const keep = (span: string) => String.fromCodePoint(KEPT_BASE + kept.push(span) - 1);

  // Private-use characters mean something here; none can come from outside.
  let out = text.replace(/[\u{E000}-\u{F8FF}]/gu, '').replace(ADDRESS, (address) => {
    // Sentence punctuation after a URL is not part of it.
    const [, body, tail] = /^(.*?)([.,;:!?)\]]*)$/su.exec(address)!;
    if (isOwn(hostOf(body), own)) return keep(body) + tail;
    return (namesSupplier(body) ? BRAND : keep(body)) + tail;
  });
  // The brand's other words, longest first so "CallPilot Support" is kept before "CallPilot" is met.
  const words = [brand.emailFromName, brand.domain, brand.supportEmail].map((w) => w?.trim()).filter((w): w is string => !!w && w.toLowerCase() !== name.toLowerCase());
  for (const w of words.sort((a, b) => b.length - a.length)) out = out.replace(wordPattern(w), (m) => keep(m));
  out = out.replace(wordPattern(name), BRAND).replace(PATTERN, BRAND);
  // Until nothing changes: "ChatGPT (GPT-4o by OpenAI)" needs two passes.
  for (let before = ''; before !== out; ) [before, out] = [out, out.replace(RUN, BRAND)];
  // The brand's possessive and the article in front of it follow the brand's own spelling.
  out = out.replace(new RegExp(`${BRAND}['’]s(?!${WORD})`, 'gu'), /s$/i.test(name) ? `${BRAND}'` : `${BRAND}'s`);
  out = out.replace(new RegExp(`(?<!${WORD})([Aa])n?(\\s+)${BRAND}`, 'gu'), (_m, a: string, space: string) => `${a}${/^[aeiou]/i.test(name) ? 'n' : ''}${space}${BRAND}`);
  return out.split(BRAND).join(name).replace(KEPT, (c) => kept[c.codePointAt(0)! - KEPT_BASE]);
}
