/**
 * The opening end to end in test mode (issue 23 §1): the whole service with the simulated
 * carrier and the scripted agent. The media session the call receives is watched (and a key
 * pressed on it) by wrapping the call registry's hand-over of the carrier's stream.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import type { MediaSession } from '../../telephony/media.ts';

let svc: TestService;
let account: TestAccount;
let customer: any;

/** What the call sent on each stream, and a way to press a key on it. */
const streams = new Map<string, { sent: string[]; press: (digit: string) => void; listening: () => boolean }>();

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental', brand_name: 'Bright Smile' });
  await advanceToNext(account, 2, 15);
  const registry = svc.services.calls;
  const ask = registry.ask.bind(registry);
  (registry as { ask: typeof registry.ask }).ask = ((id: string, msg: any) => {
    if (msg.type === 'media_connected') msg = { ...msg, session: watch(msg.session) };
    return ask(id, msg);
  }) as typeof registry.ask;
});
test.after.always(async () => {
  await svc?.stop();
});

function watch(session: MediaSession): MediaSession {
  const sent: string[] = [];
  const dtmf: ((digit: string) => void)[] = [];
  streams.set(session.callId, { sent, press: (digit) => dtmf.forEach((h) => h(digit)), listening: () => dtmf.length > 0 });
  return {
    streamSid: session.streamSid,
    callId: session.callId,
    streamToken: session.streamToken,
    sendAudio: (p) => (sent.push('audio'), session.sendAudio(p)),
    sendMark: (n) => (sent.push(`mark:${n}`), session.sendMark(n)),
    clear: () => (sent.push('clear'), session.clear()),
    close: () => session.close(),
    onAudio: (h) => session.onAudio(h),
    onMark: (h) => session.onMark(h),
    onDtmf: (h) => (dtmf.push(h), session.onDtmf(h)),
    onStop: (h) => session.onStop(h),
  };
}

const queue = async (phone: string, c = customer, body: Record<string, unknown> = {}) =>
  (await account.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, business_name: 'Acme Plumbing', phone, ...body })).body.id as string;
/** The operator's record, with what the call played and did (under `conduct`, never in the API) read out. */
const record = async (id: string) => {
  const full = (await account.admin.get(`/admin/v1/calls/${id}/compliance_record`)).body;
  const c = full.conduct;
  return { ...full, opening: c.opening.played, opt_out: c.opt_out.via ? { via: c.opt_out.via, at: c.opt_out.at } : null, recording_started_at: c.recording_started_at };
};

async function waitFor<T>(probe: () => T | undefined | null | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('never happened');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Queues and dials a call, and waits until it has taken its stream (the key handler is on), so a key can be pressed. */
async function listening(phone: string) {
  const id = await queue(phone);
  const dialled = account.admin.post('/admin/v1/dialler/run');
  const stream = await waitFor(() => streams.get(id)?.listening() && streams.get(id));
  await dialled;
  return { id, stream };
}

test.serial('an answered call: the opening is played first, recorded as played on the compliance record, recording started after it', async (t) => {
  const id = await queue('+12125550100'); // New York, digit 0: not interested
  const done = await dialUntilFinished(account, account.api, id);
  t.is(done.outcome, 'not_interested');
  const sent = streams.get(id)!.sent;
  t.is(sent[0], 'audio', 'the first thing the callee gets is the opening');
  t.deepEqual(sent.filter((s) => s.startsWith('mark:opening:')), ['mark:opening:0', 'mark:opening:1', 'mark:opening:2', 'mark:opening:3', 'mark:opening:4']);
  const r = await record(id);
  t.deepEqual(r.opening.segments.map((s: any) => [s.kind, s.played]), [
    ['identification', true], ['opt_out', true], ['notice', true], ['callback', true], ['question', true],
  ]);
  t.is(r.opening.segments[0].text, 'Hello, this call is on behalf of Bright Dental.', 'the registered name (here the name), never the brand');
  t.is(r.opening.language, 'en');
  t.regex(r.opening.audio_sha256, /^[0-9a-f]{64}$/);
  t.is(r.identification, r.opening.segments.map((s: any) => s.text).join(' '));
  t.true(r.opt_out_offered);
  t.truthy(r.recording_started_at);
  t.true(new Date(r.recording_started_at) >= new Date(r.opening.started_at), 'recording only after the notice');
  t.is(r.opt_out, null);
  const transcript = (await account.api.get(`/v1/calls/${id}/transcript`)).body.lines;
  t.deepEqual(transcript[0], { ...transcript[0], role: 'agent', text: r.identification });
});

test.serial('a 9 pressed: the number goes on do-not-call, the call hangs up at once, outcome do_not_call, opt-out on the record', async (t) => {
  const { id, stream } = await listening('+12125550106'); // digit 6: would talk until the time limit
  const pressedAt = Date.now();
  stream.press('9');
  const done = await dialUntilFinished(account, account.api, id);
  t.is(done.outcome, 'do_not_call');
  t.true(Date.now() - pressedAt < 5_000);
  t.true(stream.sent.includes('clear'), 'nothing more is played');
  const entry = (await account.api.get('/v1/dnc')).body.data.find((d: { phone: string }) => d.phone === '+12125550106');
  t.like(entry, { source: 'callee_request', call_id: id });
  t.like((await record(id)).opt_out, { via: 'dtmf' });
});

test.serial('a 9 pressed: the call has ended within a second (64.1200(b)(3) "immediately terminate"; issue 23: "ends the call within a second")', async (t) => {
  const { id, stream } = await listening('+12125550116'); // digit 6: would talk until the time limit
  const pressedAt = Date.now();
  stream.press('9');
  let endedAfterMs = Infinity;
  for (;;) {
    const c = (await account.api.get(`/v1/calls/${id}`)).body;
    if (c.finished) {
      endedAfterMs = Date.now() - pressedAt;
      t.is(c.outcome, 'do_not_call');
      break;
    }
    if (Date.now() - pressedAt > 5_000) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.true(endedAfterMs < 1_000, `ended ${endedAfterMs} ms after the key`);
});

test.serial('the do-not-call tool does the same: recorded, hung up without another word, outcome do_not_call', async (t) => {
  const id = await queue('+12125550105'); // digit 5: asks not to be called again
  const done = await dialUntilFinished(account, account.api, id);
  t.is(done.outcome, 'do_not_call');
  t.like((await record(id)).opt_out, { via: 'tool' });
  t.like((await account.api.get('/v1/dnc')).body.data.find((d: { phone: string }) => d.phone === '+12125550105'), { call_id: id });
});

test.serial('the identification and the number say the registered name, never the name or the brand (issue 23 §1; 47 CFR 64.1200(b)(1))', async (t) => {
  const llc = await makeReadyCustomer(svc.url, account.api, { name: 'Sunny Teeth', brand_name: 'Sunny Smiles', registered_name: 'Sunny Teeth Dental Group LLC' });
  const id = await queue('+12125550100', llc);
  await dialUntilFinished(account, account.api, id);
  const r = await record(id);
  t.is(r.opening.segments[0].text, 'Hello, this call is on behalf of Sunny Teeth Dental Group LLC.');
  t.regex(r.opening.segments.find((s: any) => s.kind === 'callback').text, /^You can reach Sunny Teeth Dental Group LLC at /);
  t.false(/Sunny Smiles/.test(r.identification));
});

test.serial("a French customer's test call hears French words", async (t) => {
  const fr = await makeReadyCustomer(svc.url, account.api, { name: 'Boulangerie Éclair', country: 'FR', timezone: 'Europe/Paris' });
  const consent = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'fr-1' };
  const id = await queue('+33145670000', fr, { consent });
  const done = await dialUntilFinished(account, account.api, id);
  t.true(['not_interested', 'completed'].includes(done.outcome), done.outcome);
  const r = await record(id);
  t.is(r.opening.language, 'fr');
  t.is(r.opening.segments[0].text, 'Bonjour, cet appel est passé au nom de Boulangerie Éclair.');
  t.is(r.opening.segments[1].text, 'Pour ne plus recevoir ces appels, appuyez sur 9 ou dites stop.');
  const lines = (await account.api.get(`/v1/calls/${id}/transcript`)).body.lines;
  t.regex(lines[0].text, /^Bonjour, cet appel est passé au nom de Boulangerie Éclair\./);
  // The (scripted) agent goes on in French after the opening.
  t.deepEqual(lines.filter((l: { role: string }) => l.role === 'agent').slice(1).map((l: { text: string }) => l.text), ['Pas de problème, merci pour votre temps. Au revoir.']);
});

test.serial('a call never answered costs nothing and leaves no opening on its record', async (t) => {
  const id = await queue('+12125550102'); // digit 2: no answer
  const done = await dialUntilFinished(account, account.api, id);
  t.is(done.outcome, 'no_answer');
  t.false(streams.has(id));
  t.is((await record(id)).opening, null);
  t.like((await account.api.get(`/v1/calls/${id}`)).body, { duration_seconds: 0 });
});
