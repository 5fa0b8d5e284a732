/**
 * Issue 23, second look: what a compliance reviewer and an attacker try on the call path, end to
 * end in test mode (the simulated carrier and the scripted agent). The call registry's messages
 * are wrapped so a test can act between the dialler's admission and the call's dial, and watch
 * (and press keys on) the stream the call receives.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';

let svc: TestService;
let account: TestAccount;
let customer: any;
let db: pg.Client;

/** Run before the call actor takes its `dial` message (after the dialler's admission and hold). */
const beforeDial = new Map<string, () => Promise<void>>();
/** The key handler the call put on its stream: pressing a key on the callee's phone. */
const keys = new Map<string, (digit: string) => void>();

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental' });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await advanceToNext(account, 2, 15);
  const registry = svc.services.calls;
  const ask = registry.ask.bind(registry);
  (registry as { ask: typeof registry.ask }).ask = (async (id: string, msg: any) => {
    if (msg.type === 'dial') await beforeDial.get(id)?.();
    if (msg.type === 'media_connected') {
      const session = msg.session;
      msg = { ...msg, session: { ...session, sendAudio: session.sendAudio.bind(session), sendMark: session.sendMark.bind(session), clear: session.clear.bind(session), close: session.close.bind(session), onAudio: session.onAudio.bind(session), onMark: session.onMark.bind(session), onStop: session.onStop.bind(session), onDtmf: (h: (digit: string) => void) => (keys.set(id, h), session.onDtmf(h)) } };
    }
    return ask(id, msg);
  }) as typeof registry.ask;
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

const queue = async (phone: string) =>
  (await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, business_name: 'Acme Plumbing', phone })).body.id as string;

test.serial('do-not-call is read again right before the dial: a number listed after the admission (while the opening was prepared) is never dialled', async (t) => {
  const phone = '+12125550100'; // New York, digit 0: would answer
  const id = await queue(phone);
  beforeDial.set(id, async () => {
    const r = await account.api.post('/v1/dnc', { phone, reason: 'asked by email a moment ago' });
    if (r.status !== 201) throw new Error(r.text);
  });
  const done = await dialUntilFinished(account, account.api, id);
  const row = (await db.query(`SELECT carrier_call_id, status, outcome FROM calls WHERE id = $1`, [id])).rows[0];
  t.is(row.carrier_call_id, null, 'the carrier was never asked to dial');
  t.like(done, { status: 'blocked', outcome: 'do_not_call_listed', duration_seconds: 0 });
  t.false(done.will_retry ?? false, 'and no retry is planned');
  const retries = (await db.query(`SELECT count(*)::int AS n FROM calls WHERE request_id = $1 AND id <> $1`, [id])).rows[0].n;
  t.is(retries, 0);
  const usage = (await account.api.get('/v1/usage')).body.data.filter((l: any) => l.reference === id);
  t.deepEqual(usage.filter((l: any) => l.amount_cents !== 0), [], 'nothing charged');
  // The compliance record, written at the admission with every gate passed, says what stopped the dial.
  const gates = (await db.query(`SELECT checks FROM call_compliance_records WHERE call_id = $1`, [id])).rows[0].checks;
  t.like(gates.do_not_call, { account_list: 'not_listed' }, 'what the admission read stays');
  t.like(gates.before_dial, { do_not_call: 'listed', dialled: false, outcome: 'do_not_call_listed' });
  t.truthy(Date.parse(gates.before_dial.checked_at));
});

test.serial('a 9 whose do-not-call entry cannot be written still ends the call at once (64.1200(b)(3): record and immediately terminate), and the opt-out is on the compliance record', async (t) => {
  const phone = '+12125550106'; // digit 6: would talk until the time limit
  // The do-not-call table refuses this number (a write failing as a database can).
  await db.query(`CREATE OR REPLACE FUNCTION refuse_dnc() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.e164 = '${phone}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`);
  await db.query(`CREATE TRIGGER refuse_dnc BEFORE INSERT ON dnc_numbers FOR EACH ROW EXECUTE FUNCTION refuse_dnc()`);
  t.teardown(() => db.query(`DROP TRIGGER IF EXISTS refuse_dnc ON dnc_numbers`));
  const id = await queue(phone);
  await account.admin.post('/admin/v1/dialler/run');
  const deadline = Date.now() + 5_000;
  while (!keys.has(id)) {
    if (Date.now() > deadline) throw new Error('the call never took its stream');
    await new Promise((r) => setTimeout(r, 5));
  }
  const pressedAt = Date.now();
  keys.get(id)!('9');
  const done = await dialUntilFinished(account, account.api, id, 10_000);
  t.true(Date.now() - pressedAt < 3_000, `ended ${Date.now() - pressedAt} ms after the 9`);
  t.true(done.finished);
  const rec = (await db.query(`SELECT opted_out_via FROM call_compliance_records WHERE call_id = $1`, [id])).rows[0];
  t.is(rec.opted_out_via, 'dtmf');
  t.is((await db.query(`SELECT end_reason FROM calls WHERE id = $1`, [id])).rows[0].end_reason, 'do_not_call');
});
