import { call, type Client } from './http.ts';
import { adminClient, makeCustomer, type TestAccount } from './factories.ts';
import { loadDncRegistries } from './dnc-registries.ts';

/**
 * A customer every gate lets through: its country's do-not-call registries loaded, calling
 * language certified, number provisioned, script certified, terms accepted on the onboarding page.
 * `api` decides the mode. `loadRegistries: false` leaves the registries as they are.
 */
export async function makeReadyCustomer(baseUrl: string, api: Client, fields: Record<string, unknown> = {}, opts: { loadRegistries?: boolean } = {}) {
  const con = adminClient(baseUrl);
  const customer = await makeCustomer(api, { country: 'US', timezone: 'America/New_York', ...fields });
  // Calls to a country with a national do-not-call registry wait until it is loaded (issue 20 §1).
  if (opts.loadRegistries !== false) await loadDncRegistries(con, customer.country);
  const language = (await api.get(`/v1/coverage?country=${customer.country}`)).body.calling_language;
  await con.post(`/admin/v1/languages/${language}/certify`);
  if (customer.mode === 'test') await api.post(`/v1/customers/${customer.id}/provisioning`, { steps: ['number'] });
  else await con.post(`/admin/v1/customers/${customer.id}/numbers`, { phone_number: '+12025550188' });
  await con.post(`/admin/v1/customers/${customer.id}/script/certify`);
  const link = await api.post(`/v1/customers/${customer.id}/onboarding_link`);
  await call(baseUrl, 'POST', new URL(link.body.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Owner', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  // A customer's calls are decided on its own mode's question.
  const { body } = await api.get(`/v1/customers/${customer.id}/readiness`);
  const [ready, blockers] = customer.mode === 'test' ? [body.ready_for_test_calls, body.test_blockers] : [body.ready_for_live_calls, body.blockers];
  // Without its registries loaded, a customer is ready but for them (`loadRegistries: false`).
  const others = (blockers as { code: string }[]).filter((b) => opts.loadRegistries !== false || b.code !== 'dnc_registry_stale');
  if (!ready && others.length > 0) throw new Error(`customer not ready: ${JSON.stringify(blockers)}`);
  return customer;
}

/** Moves the service's test clock forward to the next `weekday` (0 = Sunday) at `hourUtc`:00 UTC. */
export async function advanceToNext(account: TestAccount, weekday: number, hourUtc: number): Promise<Date> {
  const now = new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const target = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hourUtc));
  while (target <= now || target.getUTCDay() !== weekday) target.setUTCDate(target.getUTCDate() + 1);
  const res = await account.admin.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((target.getTime() - now.getTime()) / 1000) });
  return new Date(res.body.now);
}

/**
 * Runs dialler rounds until the call is finished and its `call.completed` is recorded (an
 * answered call's event waits for the recording), or `timeoutMs` passes; returns the call.
 */
export async function dialUntilFinished(account: TestAccount, api: Client, callId: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await account.admin.post('/admin/v1/dialler/run');
    const c = await api.get(`/v1/calls/${callId}`);
    if (c.body.finished) {
      const events = (await account.admin.get(`/admin/v1/accounts/${account.id}/events?type=call.completed`)).body.data;
      if (events.some((e: { data: { id: string } }) => e.data.id === callId)) return (await api.get(`/v1/calls/${callId}`)).body;
    }
    if (Date.now() > deadline) throw new Error(`call ${callId} did not finish: ${JSON.stringify(c.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
