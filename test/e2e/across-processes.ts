/**
 * What must hold across processes sharing one database, checked the same way wherever they run:
 * on several hosts (several-hosts.test.ts) or behind PgBouncer (pgbouncer.test.ts).
 */
import type { ExecutionContext } from 'ava';
import { client, type Client } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext } from '../helpers/calls.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';

/**
 * A test call queued through `account.api` on a Tuesday at 10:00 in New York, dialled by whichever
 * process dials, completed (simulated: not interested, 60 s); read back through `readVia`.
 */
export async function testCallCompletes(t: ExecutionContext, account: TestAccount, customerId: string, readVia: Client): Promise<any> {
  await advanceToNext(account, 2, 15);
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone: '+12025550100' });
  t.is(queued.status, 201, JSON.stringify(queued.body));
  let done: any;
  await until(
    'the test call to finish',
    async () => {
      done = (await readVia.get(`/v1/calls/${queued.body.id}`)).body;
      return done.finished;
    },
    60_000,
    250,
  );
  t.like(done, { status: 'completed', outcome: 'not_interested', duration_seconds: 60 });
  return done;
}

/**
 * A burst limit of 6 per 10 s, counted in PostgreSQL: 16 requests alternating between the two
 * API processes get 6 answers in all, not 6 from each (the in-memory store would give 12).
 */
export async function assertSharedRateLimit(t: ExecutionContext, a: { url: string }, b: { url: string }): Promise<void> {
  const limited = await makeAccount(a.url, { name: 'Limited Agency' });
  t.is((await limited.admin.patch(`/admin/v1/accounts/${limited.id}/limits`, { requests_per_minute: 1_000_000, burst: 6 })).status, 200);
  // A key made after the limit, so neither process has the account's old limits cached.
  const key = (await limited.admin.post(`/admin/v1/accounts/${limited.id}/keys`, { mode: 'test', label: 'limited' })).body.secret as string;
  // Start early in a 10-second window (they are aligned to the epoch), so all 16 fall in one.
  while (Date.now() % 10_000 > 4_000) await new Promise((r) => setTimeout(r, 100));
  const statuses: number[] = [];
  for (let i = 0; i < 16; i++) statuses.push((await client([a, b][i % 2].url, key).get('/v1/customers?limit=1')).status);
  t.is(statuses.filter((s) => s === 200).length, 6, `statuses ${statuses.join(' ')}`);
  t.is(statuses.filter((s) => s === 429).length, 10);
  t.true(statuses.slice(6).every((s) => s === 429), 'both refuse once the shared count is spent');
}

/** A key revoked through `a` is refused by `b` at once (its change feed, not a cache's expiry). */
export async function assertRevocationEverywhere(t: ExecutionContext, account: { id: string; admin: Client }, a: { url: string }, b: { url: string }): Promise<void> {
  const doomed = (await account.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'revoked elsewhere' })).body;
  const onB = client(b.url, doomed.secret);
  t.is((await onB.get('/v1/customers?limit=1')).status, 200, `the key works on ${b.url} (and is cached there)`);
  t.is((await client(a.url, ADMIN_TOKEN).delete(`/admin/v1/accounts/${account.id}/keys/${doomed.id}`)).status, 200);
  const revokedAt = Date.now();
  await until(`${b.url} to refuse the key revoked on ${a.url}`, async () => (await onB.get('/v1/customers?limit=1')).status === 401, 1_000, 20);
  t.log(`revoked on ${a.url}, refused by ${b.url} after ${Date.now() - revokedAt} ms`);
}
