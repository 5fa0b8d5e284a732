import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';

let svc: TestService;
let account: TestAccount;
let customer: any;
let now: Date;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api);
  now = await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

/** A queued request and the agent's call of `name` on it, as the speech bridge hands it over. */
async function toolOnNewRequest(phone: string, name: string, args: Record<string, unknown>) {
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone });
  return { id: r.body.id as string, reply: await svc.services.calls.ask(r.body.id, { type: 'tool_called', name, args }) };
}

test.serial('a do-not-call request whose reason holds a NUL is still recorded, and the number is never dialled', async (t) => {
  const { reply } = await toolOnNewRequest('+12025550161', 'mark_do_not_call', { reason: 'stop\u0000calling' });
  t.deepEqual(reply, { recorded: true });
  const entry = (await account.api.get('/v1/dnc')).body.data.find((d: { phone: string }) => d.phone === '+12025550161');
  t.like(entry, { source: 'callee_request', reason: 'stopcalling' });
  const again = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550161' });
  t.like(await dialUntilFinished(account, account.api, again.body.id), { status: 'blocked', outcome: 'do_not_call_listed' });
});

test.serial('a booking whose attendee name and notes hold a NUL or half a surrogate pair is booked, with storable text', async (t) => {
  // Tuesday 10:00 in New York on the service's clock: Wednesday 10:00 is within the business hours.
  const { id, reply } = await toolOnNewRequest('+12025550162', 'book_appointment', {
    start_at: new Date(now.getTime() + 86_400_000).toISOString(),
    attendee_name: 'Pat\u0000 Example',
    notes: 'Prefers mornings \uD83D',
  });
  t.like(reply, { booked: true });
  const appointment = (await account.api.get(`/v1/appointments/${(reply as { appointment_id: string }).appointment_id}`)).body;
  t.like(appointment, { call_id: id, attendee_name: 'Pat Example', notes: 'Prefers mornings \uFFFD' });
});

test.serial('a booking starting where no end can be held is refused to the agent, not a crash', async (t) => {
  const { reply } = await toolOnNewRequest('+12025550163', 'book_appointment', { start_at: '+275760-09-13T00:00:00.000Z' });
  t.deepEqual(reply, { booked: false, error: 'start_at must be a future date and time with its offset' });
});
