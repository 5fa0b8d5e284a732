import test from 'ava';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { client, type Client } from '../helpers/http.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';

/**
 * Money across real processes sharing one PostgreSQL: correctness rests on the database, not on
 * any process's memory.
 */
const TOKEN = 'sbc_e2e_money_console_token_VFYMaDMMEwjw';

test.after.always(cleanUpEverything);

async function liveAccountOn(con: Client, url: string) {
  const account = (await con.post('/admin/v1/accounts', { name: 'Two Process Agency', country: 'US' })).body;
  await con.post(`/admin/v1/accounts/${account.id}/kyb`, { status: 'verified' });
  await con.post(`/admin/v1/accounts/${account.id}/agreement`, { version: 'v1' });
  await con.post(`/admin/v1/accounts/${account.id}/go_live`);
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'live', label: 'e2e' })).body;
  const api = client(url, key.secret);
  const customer = (await api.post('/v1/customers', { name: 'Shared Customer' })).body;
  return { account, api, customer };
}

async function start(databaseUrl: string): Promise<Instance> {
  return startSwitchboard({ dataDir: await makeTempRoot('switchboard-money-'), env: { DATABASE_URL: databaseUrl, SWITCHBOARD_ADMIN_TOKEN: TOKEN, SWITCHBOARD_TEST_CLOCK: '1' } });
}

test.serial('two processes, one PostgreSQL: 200 concurrent call starts against money for 9 holds, exactly 9 succeed', async (t) => {
  const databaseUrl = await freshDatabase();
  const [p1, p2] = [await start(databaseUrl), await start(databaseUrl)];
  const c1 = client(p1.url, TOKEN);
  const c2 = client(p2.url, TOKEN);
  const { account, api, customer } = await liveAccountOn(c1, p1.url);
  await c1.patch(`/admin/v1/accounts/${account.id}/limits`, { concurrent_calls: 1000 });
  await c1.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 3_600 }); // 9 × 400

  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      (i % 2 ? c1 : c2).post(`/admin/v1/accounts/${account.id}/holds`, { mode: 'live', customer_id: customer.id, reference: `two-${i}` }),
    ),
  );
  const won = results.filter((r) => r.body.ok);
  t.is(won.length, 9, JSON.stringify(results.find((r) => r.status !== 200)?.body ?? ''));
  t.true(new Set(won.map((r) => r.body.hold.reference)).size === 9);
  const before = (await api.get('/v1/balance')).body;
  t.like(before, { reserved_cents: 3_600, available_cents: 0 });

  await Promise.all(won.map((r, i) => (i % 2 ? c2 : c1).post(`/admin/v1/accounts/${account.id}/holds/${r.body.hold.reference}/end`, { duration_seconds: 61 })));
  const after = (await api.get('/v1/balance')).body;
  const lines = (await api.get('/v1/usage')).body.data;
  t.is(after.balance_cents, lines.reduce((s: number, l: any) => s + l.amount_cents, 0), 'ledger sums to the balance');
  t.is(after.balance_cents, 3_600 - 9 * 40);
  t.is(after.reserved_cents, 0);
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await p1.stop('SIGTERM');
  await p2.stop('SIGTERM');
});

test.serial('a process killed mid-call: after restart the hold is released within 30 minutes and nothing is charged twice', async (t) => {
  const databaseUrl = await freshDatabase();
  const p1 = await start(databaseUrl);
  const c1 = client(p1.url, TOKEN);
  const { account, customer } = await liveAccountOn(c1, p1.url);
  await c1.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 5_000 });
  const h = await c1.post(`/admin/v1/accounts/${account.id}/holds`, { mode: 'live', customer_id: customer.id, reference: 'crash-call' });
  t.true(h.body.ok);
  await p1.stop('SIGKILL');

  const p2 = await start(databaseUrl);
  const c2 = client(p2.url, TOKEN);
  const balance = async () => (await c2.get(`/admin/v1/accounts/${account.id}/balance`)).body;
  t.is((await balance()).reserved_cents, 400, 'the hold survived the crash');
  await c2.post('/admin/v1/jobs/release_holds/run');
  t.is((await balance()).reserved_cents, 400, 'not released before 30 minutes');
  await c2.post('/admin/v1/test_clock/advance', { seconds: 30 * 60 });
  await c2.post('/admin/v1/jobs/release_holds/run');
  t.like(await balance(), { reserved_cents: 0, balance_cents: 5_000 });
  // The carrier's end report arrives late, twice: billed once, on its own line.
  const late = await c2.post(`/admin/v1/accounts/${account.id}/holds/crash-call/end`, { duration_seconds: 125 });
  t.is(late.body.outcome, 'late');
  t.is((await c2.post(`/admin/v1/accounts/${account.id}/holds/crash-call/end`, { duration_seconds: 125 })).body.outcome, 'already_settled');
  t.like(await balance(), { reserved_cents: 0, balance_cents: 5_000 - 60 });
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await p2.stop('SIGTERM');
});
