import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';

/**
 * Call requests as the reseller sees them (issue 20 §3, §4): what `view=requests` says of a
 * request's end, and what an `external_ref` used before means (spec, Calls: "while a request for a
 * number is open, a second request for the same number under the same customer returns the first";
 * docs/api.md, Calls).
 */
let svc: TestService;
let account: TestAccount;
let ready: any;
let other: any;

test.before(async () => {
  // The dialler only runs when asked (console), so tests decide when requests are dialled.
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api, { external_ref: 'req-ready' });
  other = await makeReadyCustomer(svc.url, account.api, { external_ref: 'req-other', name: 'Other Dental' });
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

const queue = (body: Record<string, unknown>, headers?: Record<string, string>) =>
  account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', ...body }, headers ? { headers } : undefined);
/** The request as `GET /v1/calls?view=requests` lists it. */
async function listedRequest(id: string) {
  return (await account.api.get('/v1/calls?view=requests&limit=100')).body.data.find((r: any) => r.id === id);
}

test.serial("view=requests items carry the outcome and finished of the request's call", async (t) => {
  const booked = await queue({ phone: '+12025550101' });
  const declined = await queue({ phone: '+12025550120' });
  t.like(booked.body, { object: 'call_request', finished: false, outcome: null }, 'the POST answer carries the fields too');
  t.like(await dialUntilFinished(account, account.api, booked.body.id), { outcome: 'appointment_booked' });
  t.like(await dialUntilFinished(account, account.api, declined.body.id), { outcome: 'not_interested' });
  t.like(await listedRequest(booked.body.id), { object: 'call_request', status: 'completed', finished: true, outcome: 'appointment_booked' });
  t.like(await listedRequest(declined.body.id), { object: 'call_request', finished: true, outcome: 'not_interested' });
  // Queued after the dialler rounds above, so still waiting: not finished, no outcome; then cancelled.
  const waiting = await queue({ phone: '+12025550131', external_ref: 'still-queued' });
  t.like(await listedRequest(waiting.body.id), { status: 'queued', finished: false, outcome: null });
  await account.api.delete(`/v1/calls/${waiting.body.id}`);
  t.like(await listedRequest(waiting.body.id), { status: 'cancelled', finished: true, outcome: 'cancelled' });
});

test.serial('while a request is open, its external_ref returns it (200) and queues nothing', async (t) => {
  const first = await queue({ phone: '+12025550140', external_ref: 'lead-open' });
  t.is(first.status, 201, first.text);
  const again = await queue({ phone: '+12025550141', external_ref: 'lead-open' });
  t.is(again.status, 200);
  t.is(again.body.id, first.body.id);
  await account.api.delete(`/v1/calls/${first.body.id}`);
});

test.serial('an external_ref whose request was cancelled queues a new request', async (t) => {
  const first = await queue({ phone: '+12025550142', external_ref: 'lead-cancelled' });
  t.is(first.status, 201, first.text);
  t.like((await account.api.delete(`/v1/calls/${first.body.id}`)).body, { status: 'cancelled', finished: true });
  const second = await queue({ phone: '+12025550142', external_ref: 'lead-cancelled' });
  t.is(second.status, 201, 'a new request, not the cancelled one');
  t.not(second.body.id, first.body.id);
  t.like(second.body, { status: 'queued', finished: false, external_ref: 'lead-cancelled' });
  t.like(await listedRequest(first.body.id), { status: 'cancelled' }, 'the first stays as it was');
  await account.api.delete(`/v1/calls/${second.body.id}`);
});

test.serial('an external_ref whose call finished queues a new request', async (t) => {
  const first = await queue({ phone: '+12025550150', external_ref: 'lead-finished' });
  t.like(await dialUntilFinished(account, account.api, first.body.id), { finished: true, outcome: 'not_interested' });
  const second = await queue({ phone: '+12025550150', external_ref: 'lead-finished' });
  t.is(second.status, 201, second.text);
  t.not(second.body.id, first.body.id);
  t.like(second.body, { status: 'queued', finished: false, outcome: null });
  await account.api.delete(`/v1/calls/${second.body.id}`);
});

test.serial("another customer's request with the same external_ref is never returned: a new request is queued", async (t) => {
  const mine = await queue({ phone: '+12025550160', external_ref: 'lead-shared' });
  t.is(mine.status, 201, mine.text);
  const theirs = await account.api.post('/v1/calls', { called_party: 'business', customer_id: other.id, phone: '+12025550161', external_ref: 'lead-shared' });
  t.is(theirs.status, 201, theirs.text);
  t.not(theirs.body.id, mine.body.id);
  t.like(theirs.body, { customer_id: other.id, phone: '+12025550161', status: 'queued' });
  // And the other way round, with the same number too.
  const back = await queue({ phone: '+12025550161', external_ref: 'lead-shared' });
  t.is(back.status, 200);
  t.is(back.body.id, mine.body.id, "the first customer's open request, not the other's");
  for (const id of [mine.body.id, theirs.body.id]) await account.api.delete(`/v1/calls/${id}`);
});

test.serial('simultaneous POSTs with one external_ref for an open case give one request', async (t) => {
  const answers = await Promise.all(
    ['+12025550171', '+12025550172', '+12025550173', '+12025550174', '+12025550175'].map((phone) => queue({ phone, external_ref: 'lead-race' })),
  );
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 201], answers.map((a) => a.text).join('\n'));
  t.is(new Set(answers.map((a) => a.body.id)).size, 1);
  const listed = (await account.api.get(`/v1/calls?view=requests&customer_id=${ready.id}&status=queued&limit=100`)).body.data;
  t.is(listed.filter((r: any) => r.external_ref === 'lead-race').length, 1);
  await account.api.delete(`/v1/calls/${answers[0].body.id}`);
});

test.serial('an Idempotency-Key replay answers the first request even after it ended', async (t) => {
  const key = { 'idempotency-key': 'req-once-1' };
  const first = await queue({ phone: '+12025550180', external_ref: 'lead-once' }, key);
  t.is(first.status, 201, first.text);
  await account.api.delete(`/v1/calls/${first.body.id}`);
  const replay = await queue({ phone: '+12025550180', external_ref: 'lead-once' }, key);
  t.is(replay.status, 201);
  t.is(replay.body.id, first.body.id, 'exactly once across retries');
});
