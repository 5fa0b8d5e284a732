import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import type { Client } from '../helpers/http.ts';
import { createMoneyWriter } from '../../money/writer.ts';

/*
 * A hold that takes a live account's spendable balance under one call's reserve re-assesses
 * readiness (`spendableCrossedCallReserve`), even where the low-balance stage does not move
 * (money/writer/calls.ts `afterHoldsTaken`: the second half of its condition). The stage stays
 * put when it was already recorded as `zero` while the balance still covered a call: a stage
 * recorded against a dearer reserve than today's (another month's tier, or a settlement dated on
 * a test clock). Set here directly, as that state is, so the hold moves the spendable balance
 * across the reserve and nothing else. One hold through `startCall`, a round's through `startCalls`.
 */

let svc: TestService;
let pool: pg.Pool;
const crossed: string[] = [];
const money = createMoneyWriter({
  spendableCrossedCallReserve: async (_db, accountId) => {
    crossed.push(accountId);
  },
});
test.before(async () => {
  svc = await startTestService();
  pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

type Live = TestAccount & { liveApi: Client };

/**
 * A live account topped up with 2,500 cents (the least top-up), one customer with `running` calls
 * holding 400 each, its low-balance stage then recorded as `zero`.
 */
async function staleZero(running: number) {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  t_ok(
    await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, {
      amount_cents: 2_500,
    }),
  );
  t_ok(
    await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, {
      concurrent_calls: 10,
    }),
  );
  const customer = await makeCustomer(a.liveApi);
  for (let i = 0; i < running; i++) {
    const r = await money.startCall(pool, {
      accountId: a.id,
      mode: 'live',
      customerId: customer.id,
      reference: `running-${i}`,
      now: new Date(),
    });
    if (!r.ok) throw new Error(`running call ${i} refused: ${r.reason}`);
  }
  await pool.query(`UPDATE account_money SET low_balance_stage = 'zero' WHERE account_id = $1 AND mode = 'live'`, [a.id]);
  return { a, customerId: customer.id as string };
}

function t_ok(r: { status: number; text: string }) {
  if (r.status >= 300) throw new Error(`${r.status} ${r.text}`);
}

const stageOf = async (accountId: string) =>
  (await pool.query(`SELECT low_balance_stage FROM account_money WHERE account_id = $1 AND mode = 'live'`, [accountId])).rows[0].low_balance_stage;

test.serial('startCall: a hold taking the spendable balance under one call reserve re-assesses readiness though the stage stays zero', async (t) => {
  // 500 left covers one call's hold of 400; after it, 100 does not.
  const { a, customerId } = await staleZero(5);
  crossed.length = 0;
  const r = await money.startCall(pool, {
    accountId: a.id,
    mode: 'live',
    customerId,
    reference: 'gap-1',
    now: new Date(),
  });
  t.deepEqual(r.ok ? r.hold.amount_cents : r.reason, 400);
  t.is(await stageOf(a.id), 'zero');
  t.deepEqual(crossed, [a.id]);
  const balance = (await a.liveApi.get('/v1/balance')).body;
  t.is(balance.available_cents, 100);
});

test.serial('startCalls: a round whose holds take the spendable balance under one call reserve re-assesses readiness though the stage stays zero', async (t) => {
  // 500 left covers one hold of 400, leaving 100: under one call's reserve; the round's second
  // call is refused for it. (Two holds granted would not do: the first would leave 500, whose
  // stage is not the recorded zero, and the stage's own move would re-assess readiness.)
  const { a, customerId } = await staleZero(5);
  crossed.length = 0;
  const results = await money.startCalls(pool, {
    accountId: a.id,
    mode: 'live',
    now: new Date(),
    calls: [
      { customerId, reference: 'gap-2a' },
      { customerId, reference: 'gap-2b' },
    ],
  });
  t.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? (r.value.ok ? r.value.hold.amount_cents : r.value.reason) : String(r.reason))),
    [400, 'insufficient_balance'],
  );
  t.is(await stageOf(a.id), 'zero');
  t.deepEqual(crossed, [a.id]);
});

test.serial('a hold that leaves the spendable balance above one call reserve (stage unchanged) does not re-assess readiness', async (t) => {
  // 1,300 left; 900 after the hold.
  const { a, customerId } = await staleZero(3);
  crossed.length = 0;
  const r = await money.startCall(pool, {
    accountId: a.id,
    mode: 'live',
    customerId,
    reference: 'gap-3',
    now: new Date(),
  });
  t.deepEqual(r.ok ? r.hold.amount_cents : r.reason, 400);
  // 900 left: still covers a call. The stage is re-checked (it was stale) but readiness has not moved.
  t.deepEqual(crossed, []);
});
