import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';

/*
 * A dialler round (actors/scheduler/dialler.ts): its money starts of one account in one batch
 * (`startAll`), its compliance records in one statement. Whatever happens in the middle of the
 * round, no call is dialled without its own hold and its own compliance record, and a start
 * refused in the middle waits with its reason, holding nothing and recorded as admitted nowhere.
 */

let svc: TestService;
let pool: pg.Pool;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

/** Six calls of one customer queued for an account whose ceiling is three running calls; one round run. */
async function round(t: any, first: number) {
  const account: TestAccount = await makeAccount(svc.url);
  await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, {
    concurrent_calls: 3,
  });
  const customer = await makeReadyCustomer(svc.url, account.api);
  // A Tuesday, 15:00 UTC: 10:00 or 11:00 in New York, inside the calling window.
  await advanceToNext(account, 2, 15);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const queued = await account.api.post('/v1/calls', {
      called_party: 'business',
      customer_id: customer.id,
      phone: `+1202555${first + i}`,
    });
    t.is(queued.status, 201, queued.text);
    ids.push(queued.body.id);
  }
  await account.admin.post('/admin/v1/dialler/run');
  const rows = (
    await pool.query(
      `SELECT c.id, c.dialed_at IS NOT NULL AS dialled,
              EXISTS (SELECT 1 FROM holds h WHERE h.account_id = c.account_id AND h.reference = c.id::text) AS held,
              EXISTS (SELECT 1 FROM call_compliance_records r WHERE r.call_id = c.id) AS recorded,
              (SELECT string_agg(a.reason, ',') FROM activity_log a WHERE a.account_id = c.account_id AND a.reference = c.id::text AND a.kind = 'call_start_refused') AS refused
         FROM calls c WHERE c.id = ANY($1::uuid[])`,
      [ids],
    )
  ).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id));
}

function assertRound(
  t: any,
  calls: {
    dialled: boolean;
    held: boolean;
    recorded: boolean;
    refused: string | null;
  }[],
) {
  // Three started (held, recorded), three refused at the ceiling (nothing held, nothing recorded),
  // whichever the round claimed first.
  t.deepEqual(
    calls.map((c) => [c.held, c.recorded, c.refused]).sort((x, y) => Number(y[0]) - Number(x[0])),
    [
      [true, true, null],
      [true, true, null],
      [true, true, null],
      [false, false, 'concurrency_limit'],
      [false, false, 'concurrency_limit'],
      [false, false, 'concurrency_limit'],
    ],
  );
  // No call dialled without its hold and its compliance record.
  for (const c of calls) if (c.dialled) t.true(c.held && c.recorded);
  t.true(calls.some((c) => c.dialled));
}

test.serial('a round whose starts are refused in the middle: the started calls are held and recorded, the refused ones wait holding nothing', async (t) => {
  assertRound(t, await round(t, 5_700));
});

test.serial('the database refusing the round’s compliance records: each dialled call writes its own, none is dialled without one', async (t) => {
  // The round's one statement (several rows) is refused; one row at a time is let through.
  await pool.query(`CREATE FUNCTION refuse_round_records() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF (SELECT count(*) FROM new_rows) > 1 THEN RAISE EXCEPTION 'the round''s records are refused'; END IF; RETURN NULL; END $$`);
  await pool.query(`CREATE TRIGGER refuse_round_records AFTER INSERT ON call_compliance_records REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_round_records()`);
  try {
    assertRound(t, await round(t, 5_800));
  } finally {
    await pool.query(`DROP TRIGGER refuse_round_records ON call_compliance_records`);
    await pool.query(`DROP FUNCTION refuse_round_records()`);
  }
});
