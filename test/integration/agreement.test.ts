import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient } from '../helpers/factories.ts';
import { TestClock } from '../../runtime/clock.ts';

/**
 * The reseller agreement as the operator sees it: each new version signed is dated and kept in
 * `onboarding.agreement_history`; signing the version on file again changes nothing.
 */
let svc: TestService;
/** Stands in for real time, on which signatures are dated (the test clock never dates them). */
const wall = new TestClock();
test.before(async () => {
  svc = await startTestService({}, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
});

const con = () => adminClient(svc.url);
const newAccount = async () => (await con().post('/admin/v1/accounts', { name: 'Signing Agency', country: 'US' })).body;
const sign = (id: string, version: string) => con().post(`/admin/v1/accounts/${id}/agreement`, { version });
/** Moves real time (as the service sees it), so two signatures get different dates. */
const advance = async (seconds: number) => void wall.advance(seconds * 1000);

test.serial('a new version is dated when it is signed, and every signature is kept, newest first', async (t) => {
  const account = await newAccount();
  const first = await sign(account.id, '2026-01');
  t.is(first.status, 200, first.text);
  const signedV1 = first.body.onboarding.agreement_signed_at;
  t.truthy(signedV1);

  await advance(3600);
  const second = await sign(account.id, '2026-08');
  t.is(second.status, 200, second.text);
  t.like(second.body.onboarding, { agreement_signed: true, agreement_version: '2026-08' });
  const signedV2 = second.body.onboarding.agreement_signed_at;
  t.true(Date.parse(signedV2) - Date.parse(signedV1) >= 3_600_000, `the new version's date (${signedV2}) is when it was signed, not ${signedV1}`);

  t.deepEqual(account.onboarding.agreement_history, [], 'a new account has signed nothing');
  t.deepEqual(first.body.onboarding.agreement_history, [{ version: '2026-01', signed_at: signedV1, signed_by: null }]);
  const history = [
    { version: '2026-08', signed_at: signedV2, signed_by: null },
    { version: '2026-01', signed_at: signedV1, signed_by: null },
  ];
  t.deepEqual(second.body.onboarding.agreement_history, history);

  // Where an operator looks: the account, and the account list.
  t.deepEqual((await con().get(`/admin/v1/accounts/${account.id}`)).body.onboarding.agreement_history, history);
  const listed = (await con().get('/admin/v1/accounts?limit=200')).body.data.find((a: any) => a.id === account.id);
  t.deepEqual(listed.onboarding.agreement_history, history);
});

test.serial('signing the version on file again is idempotent: same date, no new history row', async (t) => {
  const account = await newAccount();
  const signed = (await sign(account.id, 'v1')).body.onboarding;
  await advance(600);
  for (const version of ['v1', ' v1 ']) {
    const again = await sign(account.id, version);
    t.is(again.status, 200, again.text);
    t.deepEqual(again.body.onboarding, signed, `"${version}" is the version on file`);
  }
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT version FROM agreement_signatures WHERE account_id = $1`, [account.id]);
    t.deepEqual(rows, [{ version: 'v1' }]);
  } finally {
    await db.end();
  }
});

test.serial('going back to an earlier version is a new signature of it', async (t) => {
  const account = await newAccount();
  await sign(account.id, 'v1');
  await advance(60);
  await sign(account.id, 'v2');
  await advance(60);
  const back = (await sign(account.id, 'v1')).body.onboarding;
  t.is(back.agreement_version, 'v1');
  t.deepEqual(back.agreement_history.map((s: any) => s.version), ['v1', 'v2', 'v1']);
  t.is(back.agreement_history[0].signed_at, back.agreement_signed_at);
  t.true(Date.parse(back.agreement_history[0].signed_at) > Date.parse(back.agreement_history[2].signed_at));
});

test('a blank version is refused and signs nothing', async (t) => {
  const account = await newAccount();
  for (const body of [{ version: '   ' }, { version: '' }, {}]) {
    const r = await con().post(`/admin/v1/accounts/${account.id}/agreement`, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'parameter_missing', JSON.stringify(body));
  }
  const after = (await con().get(`/admin/v1/accounts/${account.id}`)).body.onboarding;
  t.like(after, { agreement_signed: false, agreement_version: null, agreement_signed_at: null });
  t.deepEqual(after.agreement_history, []);
});
