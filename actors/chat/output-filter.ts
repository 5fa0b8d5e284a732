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
/** The brand several times in a row ("OpenAI / Azure", "ChatGPT (GPT-4o by OpenAI)") → one brand. */
const RUN = new RegExp(`${BRAND}(?:\\s*(?:[/,&+]|-|and|or|on|in|at|via|through|over|using|with|by|from)?\\s*${BRAND}|\\s*\\(\\s*${BRAND}\\s*\\))+`, 'gu');

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when `text` names a supplier (the filter would change it). */
export function namesSupplier(text: string): boolean {
  return new RegExp(PATTERN.source, PATTERN.flags).test(text);
}

/**
 * `text` with every supplier name replaced by `platformName`, the reseller's brand. The brand's
 * own words are kept even when they contain a supplier's ("Google Growth Partners").
 */
export function scrubSuppliers(text: string, platformName: string): string {
  const brand = platformName.trim() || 'our platform';
  let out = text.replace(new RegExp(escapeRegExp(brand), 'giu'), BRAND).replace(PATTERN, BRAND);
  // Until nothing changes: "ChatGPT (GPT-4o by OpenAI)" needs two passes.
  for (let before = ''; before !== out; ) [before, out] = [out, out.replace(RUN, BRAND)];
  // The brand's possessive and the article in front of it follow the brand's own spelling.
  out = out.replace(new RegExp(`${BRAND}['’]s(?!${WORD})`, 'gu'), /s$/i.test(brand) ? `${BRAND}'` : `${BRAND}'s`);
  out = out.replace(new RegExp(`(?<!${WORD})([Aa])n?(\\s+)${BRAND}`, 'gu'), (_m, a: string, space: string) => `${a}${/^[aeiou]/i.test(brand) ? 'n' : ''}${space}${BRAND}`);
  return out.split(BRAND).join(brand);
}
