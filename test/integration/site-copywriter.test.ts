/**
 * The model's copywriter against the OpenAI chat fake: structured output requested as the API
 * wants it, the model's JSON used when it passes the copy check, and the deterministic copy
 * whenever it does not (invalid JSON, wrong shape, a supplier's or the reseller's name, a
 * refusal, an error, a timeout), with a log line saying why.
 */
import { Writable } from 'node:stream';
import test from 'ava';
import { createLogger } from '../../runtime/logger.ts';
import { copywriterFor, createOpenAICopywriter, SITE_COPY_SCHEMA } from '../../actors/websites/copywriter.ts';
import { deterministicCopy } from '../../actors/websites/copy.ts';
import type { SiteCopy } from '../../actors/websites/site-facts.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';
import { bareFacts, richFacts } from '../helpers/site-facts.ts';

let fake: FakeOpenAIChat;
test.before(async () => {
  fake = await startFakeOpenAIChat();
});
test.after.always(() => fake?.close());

/** A logger whose lines the test can read. */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  return { log: createLogger('info', sink), lines };
}

const MODEL_COPY: SiteCopy = {
  headline: 'Leeds Plumbing & Heating',
  tagline: 'Three generations of plumbers, across West Yorkshire.',
  intro: 'Boilers, bathrooms and emergencies: one call and a family firm is on its way, with a free quote first.',
  services: [
    { name: 'Boiler repair and servicing', description: 'Repairs and yearly services for every make.' },
    { name: 'Emergency call-outs', description: 'Day and night.' },
  ],
  about: 'A family business for three generations.',
  callToAction: 'Call for a free quote',
  metaDescription: 'Family plumbers in Leeds: boilers, bathrooms and emergency call-outs, free quotes.',
};

const writer = () => createOpenAICopywriter({ apiKey: fake.apiKey, baseUrl: fake.url, model: 'fake-chat-1', maxRetries: 0, timeoutMs: 2_000 });

test.serial('the model is asked for strict structured output and its valid copy is used as written', async (t) => {
  fake.requests.length = 0;
  fake.script({ reply: JSON.stringify(MODEL_COPY) });
  const result = await writer().write(richFacts({ locale: 'en-GB' }));
  t.deepEqual(result, { ok: true, copy: MODEL_COPY });
  t.is(fake.violations.length, 0);
  const body = fake.requests[0].body;
  t.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'site_copy', strict: true, schema: JSON.parse(JSON.stringify(SITE_COPY_SCHEMA)) } });
  t.regex(body.messages[0].content, /Write in English \(en-GB\)/);
  t.regex(body.messages[0].content, /nor Northwind Calls unless the brief asks/);
  // The facts go as JSON: the brief and the research, never contact details the model could garble.
  const facts = JSON.parse(body.messages[1].content.replace(/^FACTS \(JSON\):\n/, ''));
  t.is(facts.brief_from_the_reseller, richFacts().brief);
  t.deepEqual(facts.existing_website.services, richFacts().research!.services);
  t.false(body.messages[1].content.includes('+441134960123'));
});

test.serial('a German customer is written for in German', async (t) => {
  fake.requests.length = 0;
  fake.script({ reply: JSON.stringify({ ...MODEL_COPY, callToAction: 'Jetzt anrufen' }) });
  await writer().write(richFacts({ locale: 'de-AT' }));
  t.regex(fake.requests[0].body.messages[0].content, /Write in German \(de-AT\)/);
});

const FALLBACKS: [string, Parameters<FakeOpenAIChat['script']>[0], RegExp][] = [
  ['not JSON', { reply: 'Here is your copy: Leeds Plumbing!' }, /not JSON/],
  ['the wrong shape', { reply: JSON.stringify({ ...MODEL_COPY, services: 'plumbing' }) }, /copy check/],
  ['too long', { reply: JSON.stringify({ ...MODEL_COPY, tagline: 'x'.repeat(500) }) }, /copy check/],
  ['a supplier named', { reply: JSON.stringify({ ...MODEL_COPY, about: 'This site was written by ChatGPT.' }) }, /copy check/],
  ['the reseller named', { reply: JSON.stringify({ ...MODEL_COPY, about: 'Brought to you by Northwind Calls.' }) }, /copy check/],
  ['a refusal', { refusal: 'I cannot help with that.' }, /refused/],
  ['an answer cut off', { reply: '{"headline": "Leeds', finishReason: 'length' }, /cut off/],
  ['a server error', { status: 500 }, /did not answer/],
  ['silence', { hang: true }, /did not answer/],
];

for (const [what, answer, reason] of FALLBACKS) {
  test.serial(`the deterministic copy is used after ${what}, with a log line saying why`, async (t) => {
    const { log, lines } = capturedLog();
    fake.script(answer);
    const facts = richFacts();
    const result = await writer().write(facts, log);
    t.deepEqual(result, deterministicCopy(facts));
    const line = lines.find((l) => l.msg === 'site copy from the model not used; the deterministic copy is');
    t.truthy(line);
    t.regex(String(line?.reason), reason);
  });
}

test.serial('nothing to say: refused before the model is asked', async (t) => {
  fake.requests.length = 0;
  const result = await writer().write(bareFacts({ brief: null }));
  t.false(result.ok);
  t.is(fake.requests.length, 0);
});

test.serial('the fake refuses a strict schema the real API would refuse', async (t) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: fake.apiKey, baseURL: fake.url, maxRetries: 0 });
  const loose = { type: 'object', properties: { a: { type: 'string' } } };
  const err = await t.throwsAsync(
    client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema: loose } } }),
  );
  t.regex(String(err?.message), /additionalProperties: false/);
  t.regex(String(err?.message), /schema\.a must be required/);
  fake.violations.length = 0;
  // Unscripted, a structured request gets JSON that follows its schema, as a real model's does.
  const ok = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'site_copy', strict: true, schema: SITE_COPY_SCHEMA as never } } });
  const value = JSON.parse(ok.choices[0].message.content!);
  t.deepEqual(Object.keys(value).sort(), [...SITE_COPY_SCHEMA.required].sort());
});

test('copywriterFor picks the model with a key and the deterministic copywriter without', (t) => {
  t.is(copywriterFor({ openai: null }).name, 'deterministic');
  t.is(copywriterFor({ openai: { apiKey: 'k', baseUrl: undefined, realtimeUrl: undefined, realtimeModel: 'r', chatModel: 'c' } }).name, 'openai');
});

test.serial('a revision: the model gets the change as an instruction (apart from the brief); copy that quotes it falls back; the deterministic copy never shows it', async (t) => {
  const change = 'Put the free quotes first and leave out the landlord certificates.';
  fake.requests.length = 0;
  fake.script({ reply: JSON.stringify(MODEL_COPY) });
  const facts = richFacts({ changes: [change] });
  t.deepEqual(await writer().write(facts), { ok: true, copy: MODEL_COPY });
  const body = fake.requests[0].body;
  const sent = JSON.parse(body.messages[1].content.replace(/^FACTS \(JSON\):\n/, ''));
  t.deepEqual(sent.changes_requested_by_the_reseller, [change]);
  t.is(sent.brief_from_the_reseller, richFacts().brief, 'the brief is the order\'s, without the change in it');
  t.regex(body.messages[0].content, /changes_requested_by_the_reseller[^\n]*instructions[^\n]*never the page's words/);

  // The model put the instruction on the page: not used.
  const { log, lines } = capturedLog();
  fake.script({ reply: JSON.stringify({ ...MODEL_COPY, about: `Change: ${change}` }) });
  const quoted = await writer().write(facts, log);
  t.deepEqual(quoted, deterministicCopy(facts));
  t.true(lines.some((l) => JSON.stringify(l.problems ?? '').includes('quotes a requested change')));

  // Without a model the change cannot be followed, and it is nowhere in the copy.
  const plain = deterministicCopy(richFacts({ research: null, changes: [change] }));
  t.true(plain.ok);
  const words = plain.ok ? Object.values(plain.copy).flat().map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') : '';
  t.false(words.includes('free quotes first'));
  t.false(words.includes('Change:'));
});
