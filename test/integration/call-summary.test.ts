import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { startFakeOpenAIChat } from '../fakes/openai-chat.ts';
import { withTransaction } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { analyseByRules, analyseWithModel, analysisAtEnd, callbackInstant, createModelAnalyst, objectionHeard } from '../../actors/call/call-summary.ts';
import { summarise } from '../../actors/call/outcome.ts';
import { finishLostCall } from '../../actors/call/call-jobs.ts';

/**
 * Issue 23 §6: the post-call summary and structured outcome, read from the transcript by the
 * model when configured and by rules otherwise: the callback time asked for (an instant in the
 * customer's zone; it reaches the API in the one-sentence summary) and the objection heard (only
 * the operator and the console see it).
 */
const NY = 'America/New_York';
/** Tuesday 1 December 2026, 10:00 in New York. */
const TUESDAY_10_NY = new Date('2026-12-01T15:00:00Z');

test('callback: "call me back tomorrow at 3" is 15:00 tomorrow in the customer’s zone', (t) => {
  t.is(callbackInstant('Call me back tomorrow at 3', TUESDAY_10_NY, NY)?.toISOString(), '2026-12-02T20:00:00.000Z');
});

test('callback: a time today, a time already past today (tomorrow), a weekday (09:00), next week, in two hours, noon', (t) => {
  const at = (text: string) => callbackInstant(text, TUESDAY_10_NY, NY)?.toISOString() ?? null;
  t.is(at('can you call me back at 4:30 pm'), '2026-12-01T21:30:00.000Z');
  t.is(at('call me back at 9'), '2026-12-02T14:00:00.000Z');
  t.is(at('please call back on Friday'), '2026-12-04T14:00:00.000Z');
  t.is(at('call me again next week'), '2026-12-07T14:00:00.000Z');
  t.is(at('call me back in two hours'), '2026-12-01T17:00:00.000Z');
  t.is(at('call back tomorrow around noon'), '2026-12-02T17:00:00.000Z');
  t.is(at('call me back Tuesday at 11am'), '2026-12-08T16:00:00.000Z', 'the same weekday is next week');
  t.is(at('call me back later'), null, 'no day or time said');
  t.is(at('I have 2 dogs, see you tomorrow'), null, 'no callback asked');
});

test('callback: across a change of clocks, the wall time in the zone is kept', (t) => {
  // Saturday 28 March 2026 in Berlin (UTC+1); Sunday the 29th the clocks go to UTC+2.
  t.is(callbackInstant('call me back tomorrow at 10 am', new Date('2026-03-28T10:00:00Z'), 'Europe/Berlin')?.toISOString(), '2026-03-29T08:00:00.000Z');
});

test('objection: each rule, the strongest reason first, other for a refusal none names', (t) => {
  t.is(objectionHeard('That is way too expensive for us.', 'not_interested'), 'price');
  t.is(objectionHeard("I'm busy right now.", 'call_back_later'), 'timing');
  t.is(objectionHeard('We already have an agency, and they are cheaper.', 'not_interested'), 'has_provider');
  t.is(objectionHeard("Sorry, I'm not interested.", 'not_interested'), 'not_interested');
  t.is(objectionHeard('Hmm. Goodbye.', 'not_interested'), 'other');
  t.is(objectionHeard('Sounds good.', 'completed'), null);
});

test('rules read only the callee; the summary says the callback time in one sentence', (t) => {
  const lines = [
    { role: 'agent' as const, text: 'Could I call you back tomorrow at 3?', at: '2026-12-01T15:00:00Z' },
    { role: 'callee' as const, text: 'Not now, call me back on Thursday at 2 pm.', at: '2026-12-01T15:00:10Z' },
  ];
  const a = analyseByRules(lines, TUESDAY_10_NY, NY, 'call_back_later');
  t.is(a.callbackAt?.toISOString(), '2026-12-03T19:00:00.000Z');
  t.is(a.objection, 'timing');
  const sentence = summarise('call_back_later', 90, null, 'en-US', { at: a.callbackAt!, zone: NY });
  t.is(sentence, 'The call was answered; the prospect asked to be called back at 2026-12-03 14:00 (America/New_York). It ended after 1 min 30 s.');
  t.is(sentence.split('. ').length, 2, 'one sentence and its length');
  t.is(summarise('completed', 40, null, 'en-US', { at: a.callbackAt!, zone: NY }), 'The call was answered; the prospect asked to be called back at 2026-12-03 14:00 (America/New_York). It ended after 40 s.');
});

let svc: TestService;
let account: TestAccount;
let db: pg.Client;
let customerId: string;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  customerId = (await makeReadyCustomer(svc.url, account.api)).id;
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const analysisOf = async (id: string) => (await db.query(`SELECT callback_at, objection, source FROM call_analyses WHERE call_id = $1`, [id])).rows[0];

test.serial('a finished call: the rules read its transcript in the end’s transaction; the objection reaches the operator and the console, never the API', async (t) => {
  // Last digit 8: "I'm busy right now, call me back later."
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone: '+12025550508' });
  const done = await dialUntilFinished(account, account.api, queued.body.id);
  t.is(done.outcome, 'call_back_later');
  t.is(done.summary, 'The call was answered; the prospect asked to be called back later. It ended after 1 min 30 s.');
  t.deepEqual(await analysisOf(queued.body.id), { callback_at: null, objection: 'timing', source: 'rules' });
  const admin = await account.admin.get(`/admin/v1/calls/${queued.body.id}/compliance_record`);
  t.deepEqual(admin.body.conduct.analysis, { callback_at: null, objection: 'timing', source: 'rules' });
  for (const answer of [await account.api.get(`/v1/calls/${queued.body.id}`), await account.api.get(`/v1/calls/${queued.body.id}/compliance_record`)]) {
    t.notRegex(JSON.stringify(answer.body), /objection|timing/);
  }
});

test.serial('a callback time asked for reaches the summary, as an instant of the customer’s zone', async (t) => {
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone: '+12025550518' });
  await dialUntilFinished(account, account.api, queued.body.id);
  const call = (await createCallRepository(svc.services.pool).get(queued.body.id))!;
  await db.query(`DELETE FROM call_analyses WHERE call_id = $1`, [call.id]);
  const said = { ...call, transcript: [{ role: 'callee' as const, text: 'Call me back tomorrow at 3.', at: TUESDAY_10_NY.toISOString() }] };
  const { summary, analysis } = await withTransaction(svc.services.pool, (client) =>
    analysisAtEnd(client, said, 'call_back_later', { durationSeconds: 90, appointment: null, language: 'en-US' }, TUESDAY_10_NY),
  );
  t.is(summary, 'The call was answered; the prospect asked to be called back at 2026-12-02 15:00 (America/New_York). It ended after 1 min 30 s.');
  t.is(analysis?.callback_at?.toISOString(), '2026-12-02T20:00:00.000Z');
  // An opt-out is the outcome: no callback said then.
  const dnc = await withTransaction(svc.services.pool, (client) => analysisAtEnd(client, said, 'do_not_call', { durationSeconds: 90, appointment: null, language: 'en-US' }, TUESDAY_10_NY));
  t.is(dnc.summary, 'The call was answered; the prospect asked not to be called again and the number was added to the do-not-call list.');
});

test.serial('with the model: its reading, stored when the stream stops, is what the end uses; a failing model leaves it to the rules', async (t) => {
  const fake = await startFakeOpenAIChat();
  try {
    const analyst = createModelAnalyst({ openai: { apiKey: fake.apiKey, baseUrl: fake.url, chatModel: 'gpt-test', realtimeModel: 'x', realtimeUrl: undefined } })!;
    const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone: '+12025550528' });
    await dialUntilFinished(account, account.api, queued.body.id);
    const call = (await createCallRepository(svc.services.pool).get(queued.body.id))!;
    await db.query(`DELETE FROM call_analyses WHERE call_id = $1`, [call.id]);
    const said = { ...call, transcript: [{ role: 'callee' as const, text: 'Ugh, ring me whenever, it costs a lot anyway.', at: TUESDAY_10_NY.toISOString() }] };
    fake.script({ reply: JSON.stringify({ callback_local: '2026-12-02T16:30', objection: 'price' }) });
    await analyseWithModel(svc.services.pool, analyst, said, TUESDAY_10_NY);
    const sent = fake.requests.at(-1)!.body;
    t.is(typeof sent.max_completion_tokens, 'number');
    t.false('max_tokens' in sent);
    t.deepEqual(fake.violations, []);
    t.like(await analysisOf(call.id), { objection: 'price', source: 'model' });
    const { summary } = await withTransaction(svc.services.pool, (client) =>
      analysisAtEnd(client, said, 'completed', { durationSeconds: 40, appointment: null, language: 'en-US' }, TUESDAY_10_NY),
    );
    t.is(summary, 'The call was answered; the prospect asked to be called back at 2026-12-02 16:30 (America/New_York). It ended after 40 s.');

    // The model fails: nothing stored, the rules decide at the end.
    await db.query(`DELETE FROM call_analyses WHERE call_id = $1`, [call.id]);
    fake.script({ status: 500 });
    await analyseWithModel(svc.services.pool, analyst, said, TUESDAY_10_NY);
    t.is(await analysisOf(call.id), undefined);
    await withTransaction(svc.services.pool, (client) => analysisAtEnd(client, said, 'completed', { durationSeconds: 40, appointment: null, language: 'en-US' }, TUESDAY_10_NY));
    t.deepEqual(await analysisOf(call.id), { callback_at: null, objection: null, source: 'rules' }, 'the rules know no "costs a lot", and "ring me whenever" says no time');
  } finally {
    await fake.close();
  }
});

// ---- the summary's language (issue 23 §5) ----

const FR_CONSENT = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'fr-summary' };
/** The `call.completed` event of a call (its data is the call as GET returns it). */
const completedEvent = async (id: string) =>
  ((await account.api.get('/v1/events?type=call.completed&limit=100')).body.data as { data: { id: string; summary: string } }[]).find((e) => e.data.id === id)?.data;

test.serial("a French customer's calls are summed up in French, on the call and in call.completed; an English customer's are unchanged", async (t) => {
  const fr = await makeReadyCustomer(svc.url, account.api, { name: 'Boulangerie Éclair', country: 'FR', timezone: 'Europe/Paris' });
  const queue = async (c: string, phone: string, body: Record<string, unknown> = {}) =>
    (await account.api.post('/v1/calls', { called_party: 'business', customer_id: c, phone, ...body })).body.id as string;
  const expected: [string, string, string][] = [];

  // Digit 0: not interested (60 s); digit 8: call back later (90 s).
  const notInterested = await queue(fr.id, '+33145670010', { consent: FR_CONSENT });
  const done0 = await dialUntilFinished(account, account.api, notInterested);
  t.is(done0.outcome, 'not_interested');
  expected.push([notInterested, "L'appel a été décroché ; le prospect n'était pas intéressé. Il s'est terminé au bout de 1 min.", 'fr not_interested']);
  const callBack = await queue(fr.id, '+33145670018', { consent: FR_CONSENT });
  const done8 = await dialUntilFinished(account, account.api, callBack);
  t.is(done8.outcome, 'call_back_later');
  expected.push([callBack, "L'appel a été décroché ; le prospect a demandé à être rappelé plus tard. Il s'est terminé au bout de 1 min 30 s.", 'fr call_back_later']);

  // A request ended before a dial: its number is on the reseller's do-not-call list.
  t.is((await account.api.post('/v1/dnc', { phone: '+33145670021' })).status, 201);
  const listed = await queue(fr.id, '+33145670021', { consent: FR_CONSENT });
  t.like(await dialUntilFinished(account, account.api, listed), { status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null });
  expected.push([listed, "Le numéro figure sur une liste d'opposition aux appels ; il n'a donc pas été appelé.", 'fr do_not_call_listed']);

  // The English customer's, as they always were.
  const enNotInterested = await queue(customerId, '+12025550540');
  t.is((await dialUntilFinished(account, account.api, enNotInterested)).outcome, 'not_interested');
  expected.push([enNotInterested, 'The call was answered; the prospect was not interested. It ended after 1 min.', 'en not_interested']);
  t.is((await account.api.post('/v1/dnc', { phone: '+12025550541' })).status, 201);
  const enListed = await queue(customerId, '+12025550541');
  t.like(await dialUntilFinished(account, account.api, enListed), { status: 'blocked', outcome: 'do_not_call_listed' });
  expected.push([enListed, 'The number is on a do-not-call list, so it was not dialled.', 'en do_not_call_listed']);

  // A call lost with its process (call-jobs.ts): nothing to settle (never dialled), so no money writer is reached.
  const lost = await queue(fr.id, '+33145670030', { consent: FR_CONSENT });
  await db.query(`UPDATE calls SET status = 'in_progress' WHERE id = $1`, [lost]);
  t.true(await finishLostCall({ pool: svc.services.pool, money: undefined as never }, lost, new Date(), 'http://localhost'));
  expected.push([lost, "L'appel a été perdu avant d'avoir indiqué son résultat ; rien n'a été facturé pour cet appel.", 'fr lost']);

  for (const [id, summary, what] of expected) {
    t.is((await account.api.get(`/v1/calls/${id}`)).body.summary, summary, `GET ${what}`);
    t.is((await completedEvent(id))?.summary, summary, `call.completed ${what}`);
  }
});
