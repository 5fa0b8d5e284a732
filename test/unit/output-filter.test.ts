import test from 'ava';
import fc from 'fast-check';
import { namesSupplier, scrubSuppliers } from '../../actors/shared/output-filter.ts';

const BRAND = 'Northwind Calls';
/** What must never survive the filter, whatever the spelling. */
const LEAK = /switch\s?board|twilio|open\s?ai|chat\s?gpt|\bgpt|anthropic|claude|google|gemini|\baws\b|amazon web services|azure|microsoft|vonage|plivo|telnyx|eleven\s?labs|deepgram|vercel|heroku|cloudflare|netlify/i;

const NAMES = [
  'Switchboard', 'switchboard', 'SWITCHBOARD', 'Switch board', 'Twilio', 'OpenAI', 'Open AI', 'openai', 'ChatGPT', 'Chat GPT', 'GPT', 'GPT-4', 'GPT-4o',
  'gpt-4.1-mini', 'gpt-realtime', 'Anthropic', 'Claude', 'Claude 3.5 Sonnet', 'Google', 'Google Gemini', 'Gemini', 'Google Cloud', 'AWS', 'Amazon Web Services',
  'Azure', 'Azure OpenAI', 'Microsoft', 'Microsoft Azure', 'Vonage', 'Plivo', 'Telnyx', 'ElevenLabs', 'Eleven Labs', 'Deepgram', 'Vercel', 'Heroku',
  'Cloudflare', 'Netlify',
];

test('every supplier name is replaced by the brand, case-insensitively', (t) => {
  for (const name of NAMES) {
    const out = scrubSuppliers(`We rely on ${name} for this.`, BRAND);
    t.is(out, `We rely on ${BRAND} for this.`, name);
    t.true(namesSupplier(name), name);
  }
});

test('sentences stay readable: runs collapse, possessives and articles follow the brand', (t) => {
  t.is(scrubSuppliers('I am ChatGPT (GPT-4o by OpenAI).', BRAND), `I am ${BRAND}.`);
  t.is(scrubSuppliers('Calls run on Twilio and AWS.', BRAND), `Calls run on ${BRAND}.`);
  t.is(scrubSuppliers('Hosted on Vercel / Cloudflare, powered by OpenAI.', BRAND), `Hosted on ${BRAND}, powered by ${BRAND}.`);
  t.is(scrubSuppliers("OpenAI's model and Twilio’s network", BRAND), `${BRAND}' model and ${BRAND}' network`);
  t.is(scrubSuppliers("OpenAI's model", 'Acme'), "Acme's model");
  t.is(scrubSuppliers('This is an OpenAI model on a Twilio line.', BRAND), `This is a ${BRAND} model on a ${BRAND} line.`);
  t.is(scrubSuppliers('This is a Twilio line.', 'Orbit Sales'), 'This is an Orbit Sales line.');
  t.is(scrubSuppliers('An OpenAI model.', BRAND), `A ${BRAND} model.`);
});

test('ordinary words that contain or resemble a name are left alone', (t) => {
  for (const text of [
    'Whisper your opener? No: speak clearly.',
    'Trust is the bedrock of a good call.',
    'Make the pitch cohere around one problem.',
    'Switch the board meeting to Friday.',
    'A googly question in cricket.',
    'The gptx field and the awsome typo.',
    'Follow up with Claudette tomorrow.',
    'Bandwidth on the call team is limited.',
    'A philanthropic client met us in the open air.',
    'Plot it on Cartesian axes, and keep hugging faces out of the pitch.',
  ]) {
    t.is(scrubSuppliers(text, BRAND), text, text);
    t.false(namesSupplier(text), text);
  }
});

test('a distinctive name glued to other text goes with the word it is in', (t) => {
  t.is(scrubSuppliers('Ask TwilioSupport, then #OpenAI2024; see switchboards.', BRAND), `Ask ${BRAND}, then #${BRAND}; see ${BRAND}.`);
  t.is(scrubSuppliers('Twilio-based routing', BRAND), `${BRAND}-based routing`);
});

test("the brand's own words are kept even when they contain a supplier's", (t) => {
  t.is(scrubSuppliers('Google Growth Partners runs on Google Cloud.', 'Google Growth Partners'), 'Google Growth Partners runs on Google Growth Partners.');
  t.is(scrubSuppliers('Twilio is fine.', '  '), 'our platform is fine.', 'a blank brand falls back to a neutral phrase');
});

test('text without a supplier comes back unchanged', (t) => {
  const text = 'Your connect rate was 60% (3 of 5 dialled calls). Ask for the meeting earlier.';
  t.is(scrubSuppliers(text, BRAND), text);
});

test('property: whatever surrounds a supplier name, nothing of it survives', (t) => {
  const separator = fc.constantFrom(' ', '\n', ', ', '. ', ' (', ') ', ': ', ' - ', '!', '?');
  const words = fc.array(fc.constantFrom('the', 'calls', 'run', 'on', 'and', 'a', 'an', 'we', 'use', 'model', 'by'), { maxLength: 3 }).map((w) => w.join(' '));
  fc.assert(
    fc.property(fc.array(fc.tuple(words, separator, fc.constantFrom(...NAMES), fc.constantFrom('', "'s", '’s'), separator), { minLength: 1, maxLength: 6 }), (parts) => {
      const text = parts.map(([before, sep1, name, suffix, sep2]) => `${before}${sep1}${name}${suffix}${sep2}`).join('');
      const out = scrubSuppliers(text, BRAND);
      return !LEAK.test(out) && out.includes(BRAND);
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

test('property: a distinctive name survives no glue on either side', (t) => {
  const glue = fc.string({ unit: fc.constantFrom(...'abcXYZ019_'.split('')), maxLength: 5 });
  const names = ['Switchboard', 'Twilio', 'OpenAI', 'ChatGPT', 'ElevenLabs', 'Deepgram', 'Telnyx', 'Plivo', 'Vonage', 'Heroku', 'Netlify', 'Vercel', 'Cloudflare'];
  fc.assert(
    fc.property(glue, fc.constantFrom(...names), glue, (before, name, after) => !new RegExp(name, 'i').test(scrubSuppliers(`x ${before}${name}${after} y`, BRAND))),
    { numRuns: 500 },
  );
  t.pass();
});

// — the reseller's own words, addresses and links (issue 10 §5) —

/** A reseller whose brand and domain contain a word the filter removes elsewhere (Gemini). */
const GEMINI = { name: 'Gemini Growth', emailFromName: 'Gemini Growth Team', domain: 'gemini-growth.example', supportEmail: 'help@gemini-growth.example' };

test("the reseller's support email and links come through exactly as written, whatever their case", (t) => {
  const callPilot = { name: 'Callpilot', emailFromName: 'CallPilot Support', domain: 'callpilot.example', supportEmail: 'help@CallPilot.example' };
  for (const text of [
    'Write to help@CallPilot.example and they will answer.',
    'Log in at https://callpilot.example/login?next=/calls or www.callpilot.example.',
    'CallPilot Support can help; see app.callpilot.example.',
  ]) {
    t.is(scrubSuppliers(text, callPilot), text, text);
  }
});

test('a brand, domain and sender name containing a filtered word are kept; the supplier elsewhere still goes', (t) => {
  const text =
    'Gemini Growth Team here: email help@gemini-growth.example or open https://app.gemini-growth.example/help, and Gemini Growth answers.';
  t.is(scrubSuppliers(text, GEMINI), text);
  t.is(scrubSuppliers('Gemini Growth runs on Google Gemini, and Gemini writes this.', GEMINI), 'Gemini Growth runs on Gemini Growth, and Gemini Growth writes this.');
  t.true(namesSupplier(text), 'the same words are a supplier name anywhere else');
  t.is(scrubSuppliers('Ask help@gemini-growth.example.', 'Northwind Calls'), `Ask ${BRAND}.`, "without the reseller's domain the address is a supplier's");
});

test("another party's URL or address naming a supplier goes whole; one naming none is kept whole", (t) => {
  t.is(scrubSuppliers('See https://platform.openai.com/docs/guide, or write to support@twilio.com.', BRAND), `See ${BRAND}, or write to ${BRAND}.`);
  t.is(scrubSuppliers('Visit twilio.com for more.', BRAND), `Visit ${BRAND} for more.`);
  const neutral = 'Read https://example.org/Cold-Calling?x=1 and write to Pat.Lee@example.org.';
  t.is(scrubSuppliers(neutral, BRAND), neutral);
});

test('the display name is only met as whole words, and brand words never recase other text', (t) => {
  t.is(scrubSuppliers('An example: the axe fell.', 'X'), 'An example: the axe fell.');
  t.is(scrubSuppliers('northwind calls and OpenAI', BRAND), BRAND, 'the brand and a supplier in a row read as the brand once');
  t.is(scrubSuppliers('Acmeville is near.', 'Acme'), 'Acmeville is near.');
});
