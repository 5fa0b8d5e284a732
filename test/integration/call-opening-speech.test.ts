/**
 * The opening's synthesis: the OpenAI speech adapter against a fake of the endpoint speaking its
 * public shape, and prepared speech's cache (PostgreSQL, shared by processes, plus memory).
 */
import test from 'ava';
import pg from 'pg';
import { OpenAISpeechSynthesizer, OPENAI_SPEECH_MODEL, pcm24kToMulaw8k } from '../../telephony/speech-synthesis/openai-speech.ts';
import { DeterministicSynthesizer, type SpeechSynthesizer } from '../../telephony/speech-synthesis/synthesizer.ts';
import { FRAME_BYTES, mulawToLinear } from '../../telephony/mulaw.ts';
import { fakeSpeechPcm, startFakeOpenAISpeech, type FakeOpenAISpeech } from '../fakes/openai-speech.ts';
import { prepareSpeech, sha256 } from '../../actors/call/prepared-speech.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { systemClock } from '../../runtime/clock.ts';

let fake: FakeOpenAISpeech;
let svc: TestService;
let pool: pg.Pool;
test.before(async () => {
  fake = await startFakeOpenAISpeech('sk-speech');
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
});
test.after.always(async () => {
  await fake?.close();
  await pool?.end();
  await svc?.stop();
});

test.serial('the adapter asks for gpt-4o-mini-tts in the customer’s voice as 24 kHz pcm, and gives 8 kHz μ-law in whole 20 ms frames', async (t) => {
  const voice = new OpenAISpeechSynthesizer({ apiKey: 'sk-speech', baseUrl: fake.url, maxRetries: 0 });
  const text = 'Bonjour, cet appel est passé au nom de Boulangerie Éclair.';
  const audio = await voice.synthesize({ text, language: 'fr-FR', voice: 'coral' });
  const request = fake.requests.at(-1)!;
  t.like(request, { model: OPENAI_SPEECH_MODEL, voice: 'coral', input: text, response_format: 'pcm' });
  t.is(OPENAI_SPEECH_MODEL, 'gpt-4o-mini-tts');
  t.regex(request.instructions ?? '', /Speak French \(fr-FR\)/);
  // 24,000 samples a second in, 8,000 out: a third of the samples, padded to 160-byte frames.
  const samples24k = fakeSpeechPcm(text).length / 2;
  t.is(audio.length % FRAME_BYTES, 0);
  t.is(audio.length, Math.ceil(Math.floor(samples24k / 3) / FRAME_BYTES) * FRAME_BYTES);
  // The 300 Hz tone survives the filter at about its level (8,000 of 32,767).
  const peak = Math.max(...[...audio.subarray(1000, 3000)].map((b) => Math.abs(mulawToLinear(b))));
  t.true(peak > 6_000 && peak < 10_000, String(peak));
});

test.serial('the endpoint’s errors reach the caller: a wrong key (401), an unknown voice (400), a rate limit retried', async (t) => {
  const wrongKey = new OpenAISpeechSynthesizer({ apiKey: 'sk-wrong', baseUrl: fake.url, maxRetries: 0 });
  const e401 = await t.throwsAsync(wrongKey.synthesize({ text: 'Hello.', language: 'en-US', voice: 'marin' }));
  t.regex(String(e401?.message), /401|Incorrect API key/);
  const voice = new OpenAISpeechSynthesizer({ apiKey: 'sk-speech', baseUrl: fake.url, maxRetries: 0 });
  const e400 = await t.throwsAsync(voice.synthesize({ text: 'Hello.', language: 'en-US', voice: 'nobody' }));
  t.regex(String(e400?.message), /400|voice/);
  fake.script({ status: 429, retryAfterMs: 10 });
  const retrying = new OpenAISpeechSynthesizer({ apiKey: 'sk-speech', baseUrl: fake.url, maxRetries: 1 });
  const audio = await retrying.synthesize({ text: 'Hello.', language: 'en-US', voice: 'marin' });
  t.true(audio.length > 0);
});

test('pcm24kToMulaw8k keeps every third sample’s time: 2,400 samples in, 800 out', (t) => {
  t.is(pcm24kToMulaw8k(Buffer.alloc(4_800)).length, 800);
  t.is(pcm24kToMulaw8k(Buffer.alloc(0)).length, 0);
});

/** A synthesizer that counts its calls. */
function counting(inner: SpeechSynthesizer) {
  const counted = { calls: 0 };
  const synth: SpeechSynthesizer = { name: inner.name, synthesize: (r) => (counted.calls++, inner.synthesize(r)) };
  return { synth, counted };
}

test.serial('prepared speech: synthesized once per customer, language, voice and text, shared through the database, frames of 20 ms', async (t) => {
  const account = await makeAccount(svc.url);
  const customer = await makeCustomer(account.api, { country: 'US', timezone: 'America/New_York' });
  const first = counting(new DeterministicSynthesizer());
  const request = { customerId: customer.id, language: 'en-US', voice: 'marin', text: 'To stop these calls, press 9 or say stop.' };
  // Two hundred calls starting together: one synthesis.
  const all = await Promise.all(Array.from({ length: 200 }, () => prepareSpeech({ pool, clock: systemClock, synthesizer: first.synth }, request)));
  t.is(first.counted.calls, 1);
  const speech = all[0]!;
  t.true(all.every((s) => s === speech));
  t.true(speech.frames.every((f) => Buffer.from(f, 'base64').length === FRAME_BYTES));
  t.is(speech.durationMs, speech.frames.length * 20);
  const audio = Buffer.concat(speech.frames.map((f) => Buffer.from(f, 'base64')));
  t.is(speech.sha256, sha256(audio));
  t.deepEqual(audio, await new DeterministicSynthesizer().synthesize(request));
  // Another process (a synthesizer of the same name, memory missed by a new text first stored by "the other"): the database answers.
  const other = counting(new DeterministicSynthesizer());
  const text2 = { ...request, text: 'Do you have a moment?' };
  await prepareSpeech({ pool, clock: systemClock, synthesizer: other.synth }, text2);
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM opening_audio WHERE customer_id = $1`, [customer.id]);
  t.is(rows[0].n, 2);
  // Another voice is another piece of audio.
  await prepareSpeech({ pool, clock: systemClock, synthesizer: other.synth }, { ...request, voice: 'coral' });
  t.is(other.counted.calls, 2);
  // Test-mode calls always speak in the deterministic voice, whatever the live synthesizer is.
  const live = counting({ name: 'openai', synthesize: async () => Buffer.alloc(0) });
  await prepareSpeech({ pool, clock: systemClock, synthesizer: live.synth }, { ...request, text: 'Test mode.', mode: 'test' });
  t.is(live.counted.calls, 0);
});
