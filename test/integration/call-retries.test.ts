import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';

/**
 * Retries (issue 23 §4): a request no one answered is tried again inside its life, each attempt a
 * call of its own under the request, on a test clock (the simulated carrier: a number's last digit
 * chooses the outcome, README). Every attempt passes the dialler's gates again.
 */
let svc: TestService;
let db: pg.Pool;
test.before(async () => {
  // Nothing runs on its own schedule: what is dialled is the advance's or the test's doing.
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_SENDER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  db = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

const HOUR = 3600_000;
const CONSENT = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'consent-retries' };

/** The first Tuesday at 14:00 UTC (09:00 in New York, winter) at least `daysAhead` days from now. */
function tuesday14(daysAhead = 2): Date {
  const from = new Date(Date.now() + daysAhead * 86_400_000);
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate(), 14));
  while (d <= from || d.getUTCDay() !== 2) d.setUTCDate(d.getUTCDate() + 1);
  return d;
}

const sql = async (text: string, values: unknown[] = []): Promise<any[]> => (await db.query(text, values)).rows;

interface Scenario {
  account: TestAccount;
  owner: ConsoleClient;
  customerId: string;
  clockId: string;
  frozen: Date;
}

/** A ready test customer on a clock frozen at `frozen`, with `retries` stored as its policy when given. */
async function scenario(frozen: Date, retries?: Record<string, number>): Promise<Scenario> {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const customer = await makeReadyCustomer(svc.url, account.api);
  // The reseller's API for call settings is another part's (docs/api.md "Call settings"); stored as it stores them.
  if (retries) await sql(`UPDATE customers SET call_settings = $2 WHERE id = $1`, [customer.id, JSON.stringify({ retries })]);
  const clock = await owner.post('/console/api/test_clocks', { name: 'Retries', frozen_time: frozen.toISOString() });
  await owner.patch(`/console/api/customers/${customer.id}/test_clock`, { test_clock: clock.body.id });
  return { account, owner, customerId: customer.id, clockId: clock.body.id, frozen };
}

const queue = (s: Scenario, phone: string, extra: Record<string, unknown> = {}) =>
  s.account.api.post('/v1/calls', { called_party: 'business', customer_id: s.customerId, business_name: 'Acme Plumbing', phone, ...extra });

const advanceTo = (s: Scenario, at: Date) => s.owner.post(`/console/api/test_clocks/${s.clockId}/advance`, { to: at.toISOString() });

async function requestOf(s: Scenario, id: string) {
  const list = (await s.account.api.get(`/v1/calls?view=requests&customer_id=${s.customerId}`)).body.data;
  return list.find((r: { id: string }) => r.id === id);
}

async function completedEvents(s: Scenario) {
  return (await s.account.admin.get(`/admin/v1/accounts/${s.account.id}/events?type=call.completed`)).body.data as { data: any }[];
}

/** Minutes between two local times of day in New York (0–720). */
function apartMinutes(a: Date, b: Date): number {
  const m = (d: Date) => {
    const [h, min] = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d).split(':').map(Number);
    return h * 60 + min;
  };
  const d = Math.abs(m(a) - m(b));
  return Math.min(d, 1440 - d);
}

/**
 * Three attempts of one request to `phone` (whose every call ends `outcome`) on a clock, each at
 * least 4 hours after the last ended, at different local times, inside the window, each its own
 * call with its own event and compliance record. Returns the scenario and the calls' ids.
 */
async function threeAttempts(t: ExecutionContext, phone: string, outcome: string) {
  const s = await scenario(tuesday14());
  const r = await queue(s, phone);
  t.is(r.status, 201, r.text);
  t.like(r.body, { object: 'call_request', attempts: 1, status: 'queued' });
  t.is(r.body.calls.length, 1);
  t.like(r.body.calls[0], { id: r.body.id, attempt: 1, status: 'queued' });

  const ids = [r.body.id];
  const dialTimes: Date[] = [s.frozen];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const done = await dialUntilFinished(s.account, s.account.api, ids[attempt - 1]);
    t.like(done, { request_id: r.body.id, attempt, outcome, finished: true });
    const request = await requestOf(s, r.body.id);
    if (attempt < 3) {
      t.true(done.will_retry, `attempt ${attempt} is retried`);
      const retryAt = new Date(done.retry_at);
      t.true(retryAt.getTime() >= dialTimes[attempt - 1].getTime() + 4 * HOUR, 'at least min_gap_hours (4) after the attempt ended');
      for (const earlier of dialTimes) t.true(apartMinutes(retryAt, earlier) >= 120, 'at a local time of day 2 hours from every earlier attempt');
      t.like(request, { attempts: attempt + 1, status: 'queued', finished: false, waiting_reason: 'retry_scheduled', next_attempt_at: retryAt.toISOString() });
      const next = request.calls[attempt];
      t.like(next, { attempt: attempt + 1, status: 'queued' });
      // Not before its time: a dialler round leaves it queued.
      await s.account.admin.post('/admin/v1/dialler/run');
      t.like((await s.account.api.get(`/v1/calls/${next.id}`)).body, { status: 'queued', request_id: r.body.id, attempt: attempt + 1, will_retry: false });
      // The console's trail of the waiting retry: no gate has held it (it waits for its planned time).
      const page = await s.owner.get(`/console/api/calls/${next.id}?mode=test`);
      t.is(page.status, 200, page.text);
      t.deepEqual(page.body.compliance_trail.filter((e: { passed: boolean }) => !e.passed), []);
      ids.push(next.id);
      dialTimes.push(retryAt);
      const advanced = await advanceTo(s, retryAt);
      t.is(advanced.status, 200, advanced.text);
    } else {
      t.false(done.will_retry, 'max_attempts (3) reached');
      t.is(done.retry_at, null);
      t.like(request, { attempts: 3, status: 'completed', finished: true, outcome });
    }
  }
  // Each attempt was dialled inside New York's window (federal 08:00–21:00) on the clock's time.
  for (const at of dialTimes) {
    const hour = Number(new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', hourCycle: 'h23' }).format(at));
    t.true(hour >= 8 && hour < 21, `${at.toISOString()} inside the window`);
  }
  t.is(new Set(dialTimes.map((d) => new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d))).size, 3);

  // Three calls listed (each attempt its own call), one request.
  const calls = (await s.account.api.get(`/v1/calls?customer_id=${s.customerId}`)).body.data;
  t.deepEqual(calls.map((c: any) => c.id).sort(), [...ids].sort());
  const requests = (await s.account.api.get(`/v1/calls?view=requests&customer_id=${s.customerId}`)).body.data;
  t.is(requests.length, 1);
  t.deepEqual(requests[0].calls.map((c: any) => c.id), ids);
  // Its own call.completed, the first two saying a retry is planned.
  const events = (await completedEvents(s)).filter((e) => e.data.request_id === r.body.id);
  t.deepEqual(events.map((e) => [e.data.attempt, e.data.will_retry]).sort(), [[1, true], [2, true], [3, false]]);
  // Each attempt has its own compliance record, written right before its dial.
  for (const id of ids) t.is((await s.account.api.get(`/v1/calls/${id}/compliance_record`)).status, 200);
  return { s, ids };
}

test.serial('no answer: three attempts at least 4 hours apart, at different local times, inside the window, each its own call and event', async (t) => {
  // Last digit 2: nobody answers.
  await threeAttempts(t, '+12025550102', 'no_answer');
});

test.serial('a machine answers: three attempts, each with its own hold and charge', async (t) => {
  // Last digit 4: a machine answers (outcome voicemail, 30 seconds: one minute charged per call).
  const { s, ids } = await threeAttempts(t, '+12025550104', 'voicemail');
  const usage = (await s.account.api.get('/v1/usage?limit=200')).body.data.filter((l: any) => l.cause === 'call');
  for (const id of ids) t.like(usage.filter((l: any) => l.reference === id), [{ type: 'usage', minutes: 1, customer_id: s.customerId }], `one charge for ${id}`);
  const holds = await sql(`SELECT reference, status FROM holds WHERE reference = ANY($1::text[]) ORDER BY seq`, [ids]);
  t.deepEqual(holds, ids.map((reference) => ({ reference, status: 'settled' })), 'each call took and settled its own hold');
});

test.serial('no retry after not interested, a do-not-call request or a booked appointment', async (t) => {
  const s = await scenario(tuesday14());
  // Last digits: 0 not interested, 5 asks not to be called again, 1 books.
  for (const [phone, outcome] of [['+12025550110', 'not_interested'], ['+12025550115', 'do_not_call'], ['+12025550111', 'appointment_booked']]) {
    const r = await queue(s, phone);
    const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
    t.like(done, { outcome, will_retry: false, retry_at: null, attempt: 1 });
    t.like(await requestOf(s, r.body.id), { attempts: 1, finished: true, outcome });
  }
});

test.serial('max_attempts 1: a request is never retried', async (t) => {
  const s = await scenario(tuesday14(), { max_attempts: 1 });
  const r = await queue(s, '+12025550112');
  const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
  t.like(done, { outcome: 'no_answer', will_retry: false, retry_at: null });
  t.like(await requestOf(s, r.body.id), { attempts: 1, finished: true, outcome: 'no_answer' });
});

test.serial('min_gap_hours from the policy; a do-not-call entry added between attempts stops the next at admission', async (t) => {
  const s = await scenario(tuesday14(), { min_gap_hours: 6 });
  const r = await queue(s, '+12025550113');
  const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
  t.like(done, { outcome: 'busy', will_retry: true });
  t.is(done.retry_at, new Date(s.frozen.getTime() + 6 * HOUR).toISOString());
  t.is((await s.account.api.post('/v1/dnc', { phone: '+12025550113' })).status < 300, true);
  await advanceTo(s, new Date(done.retry_at));
  const request = await requestOf(s, r.body.id);
  t.like(request, { attempts: 2, finished: true, status: 'blocked', outcome: 'do_not_call_listed' });
  t.like(request.calls[1], { attempt: 2, status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null });
  t.like((await s.account.api.get(`/v1/calls/${r.body.id}`)).body, { will_retry: false, retry_at: null }, 'the withdrawn retry is no longer announced');
});

test.serial('a do-not-call entry ends the planned attempt at the next dialler round, not when it was due: the retry is withdrawn at once', async (t) => {
  const s = await scenario(tuesday14(), { min_gap_hours: 6 });
  const r = await queue(s, '+12025550103');
  const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
  t.like(done, { outcome: 'busy', will_retry: true });
  t.is((await s.account.api.post('/v1/dnc', { phone: '+12025550103', reason: 'asked by email' })).status, 201);
  // No clock moves: the planned attempt (6 hours away) is due now and meets the gate.
  await s.account.admin.post('/admin/v1/dialler/run');
  const request = await requestOf(s, r.body.id);
  t.like(request.calls[1], { attempt: 2, status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null });
  t.like((await s.account.api.get(`/v1/calls/${r.body.id}`)).body, { will_retry: false, retry_at: null });
});

test.serial('cancelling a request with a pending attempt cancels that attempt, by the request id or the attempt id', async (t) => {
  const s = await scenario(tuesday14());
  for (const byAttempt of [false, true]) {
    const r = await queue(s, byAttempt ? '+12025550117' : '+12025550127');
    t.like(await dialUntilFinished(s.account, s.account.api, r.body.id), { outcome: 'failed', will_retry: true });
    const pending = (await requestOf(s, r.body.id)).calls[1];
    const cancelled = await s.account.api.delete(`/v1/calls/${byAttempt ? pending.id : r.body.id}`);
    t.is(cancelled.status, 200, cancelled.text);
    t.like(cancelled.body, { object: 'call_request', id: r.body.id, status: 'cancelled', outcome: 'cancelled', finished: true, attempts: 2 });
    t.like(cancelled.body.calls[1], { id: pending.id, status: 'cancelled' });
    t.like((await s.account.api.get(`/v1/calls/${r.body.id}`)).body, { will_retry: false, retry_at: null });
    // Again: answered unchanged.
    t.like((await s.account.api.delete(`/v1/calls/${r.body.id}`)).body, { status: 'cancelled', attempts: 2 });
    const events = (await completedEvents(s)).filter((e) => e.data.id === pending.id);
    t.is(events.length, 1);
    t.like(events[0].data, { status: 'cancelled', attempt: 2, request_id: r.body.id });
  }
  // Nothing is dialled when the clock passes the planned time.
  await advanceTo(s, new Date(s.frozen.getTime() + 30 * HOUR));
  t.is((await s.account.api.get(`/v1/calls?customer_id=${s.customerId}`)).body.data.length, 2);
});

test.serial('while a retry is pending the request stays open: the same number or external_ref answers the request', async (t) => {
  const s = await scenario(tuesday14());
  const r = await queue(s, '+12025550132', { external_ref: 'lead-retry' });
  await dialUntilFinished(s.account, s.account.api, r.body.id);
  const again = await queue(s, '+12025550132');
  t.is(again.status, 200);
  t.like(again.body, { id: r.body.id, attempts: 2, status: 'queued' });
  const byRef = await queue(s, '+12025550142', { external_ref: 'lead-retry' });
  t.is(byRef.status, 200);
  t.is(byRef.body.id, r.body.id);
  // view=requests filters on the request's status, its latest call's: queued, though its first call completed.
  const queued = (await s.account.api.get(`/v1/calls?view=requests&status=queued&customer_id=${s.customerId}`)).body.data;
  t.deepEqual(queued.map((q: { id: string }) => q.id), [r.body.id]);
  t.deepEqual((await s.account.api.get(`/v1/calls?view=requests&status=completed&customer_id=${s.customerId}`)).body.data, []);
  // GET /v1/calls lists the dialled call only; the queued retry once it is dialled.
  t.deepEqual((await s.account.api.get(`/v1/calls?customer_id=${s.customerId}`)).body.data.map((c: { id: string }) => c.id), [r.body.id]);
});

test.serial('frequency caps count attempts: a Florida number gets at most 3 attempts in 24 hours', async (t) => {
  // Five attempts, two hours apart at least: Florida's cap (3 in 24 hours) holds the fourth.
  const s = await scenario(tuesday14(), { max_attempts: 5, min_gap_hours: 2 });
  const r = await queue(s, '+13055550152', { consent: CONSENT });
  t.is(r.status, 201, r.text);
  let id = r.body.id;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const done = await dialUntilFinished(s.account, s.account.api, id);
    t.like(done, { attempt, outcome: 'no_answer', will_retry: true });
    id = (await requestOf(s, r.body.id)).calls[attempt].id;
    await advanceTo(s, new Date(done.retry_at));
  }
  const fourth = (await s.account.api.get(`/v1/calls/${id}`)).body;
  t.like(fourth, { attempt: 4, status: 'queued', waiting_reason: 'frequency_cap', next_attempt_at: new Date(s.frozen.getTime() + 24 * HOUR).toISOString() });
});

test.serial('Nevada: no retry after the callee hung up on a call from the customer; the admission gate ends the attempt', async (t) => {
  const s = await scenario(tuesday14());
  // Las Vegas (Pacific: 06:00 when the clock says 14:00 UTC); open at 09:00 there.
  const LAS_VEGAS = '+17025550162';
  const r = await queue(s, LAS_VEGAS, { consent: CONSENT });
  t.is(r.status, 201, r.text);
  await advanceTo(s, new Date(s.frozen.getTime() + 3 * HOUR));
  const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
  t.like(done, { outcome: 'no_answer', will_retry: true });
  // Meanwhile the callee took a call from this customer and hung up (outcome completed), e.g. one
  // it called back on: written as the call path writes an ended call.
  const [row] = await sql(`SELECT account_id FROM calls WHERE id = $1`, [r.body.id]);
  await sql(
    `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, outcome, dial_before, next_attempt_at, dialed_at, ended_at, created_at, updated_at)
     VALUES ($1, 'test', $2, $3, 'US', $3, 'completed', 'completed', now() + interval '1 day', now(), now(), now(), now(), now())`,
    [row.account_id, s.customerId, LAS_VEGAS],
  );
  await advanceTo(s, new Date(done.retry_at));
  const request = await requestOf(s, r.body.id);
  t.like(request, { attempts: 2, finished: true, status: 'blocked', outcome: 'no_redial_after_hang_up' });
  t.is(request.calls[1].dialed_at, null);
});

test.serial("a retry is never planned past dial_before, and one that is not dialled by then expires, withdrawing the retry", async (t) => {
  const s = await scenario(tuesday14());
  // Deadline 3 hours on: 4 hours after the end is past it, so no retry.
  const short = await queue(s, '+12025550152', { dial_before: new Date(s.frozen.getTime() + 3 * HOUR).toISOString() });
  t.like(await dialUntilFinished(s.account, s.account.api, short.body.id), { outcome: 'no_answer', will_retry: false, retry_at: null });
  t.like(await requestOf(s, short.body.id), { attempts: 1, finished: true, outcome: 'no_answer' });

  // Deadline 5 hours on: the retry is planned at 4 hours; the clock jumps past the deadline before it is dialled.
  const r = await queue(s, '+12025550162', { dial_before: new Date(s.frozen.getTime() + 5 * HOUR).toISOString() });
  const done = await dialUntilFinished(s.account, s.account.api, r.body.id);
  t.like(done, { will_retry: true, retry_at: new Date(s.frozen.getTime() + 4 * HOUR).toISOString() });
  await advanceTo(s, new Date(s.frozen.getTime() + 6 * HOUR));
  t.like(await requestOf(s, r.body.id), { attempts: 2, finished: true, status: 'expired', outcome: 'expired' });
  t.like((await s.account.api.get(`/v1/calls/${r.body.id}`)).body, { will_retry: false, retry_at: null });
});
