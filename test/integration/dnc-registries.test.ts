import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { adminCli } from '../helpers/admin-cli.ts';

/**
 * National do-not-call registries (issue 20 §1): a registry of the called country never loaded,
 * or loaded more than 31 days ago (16 CFR 310.4(b)(3)(iv); 47 CFR 64.1200(c)(2)), stops dials
 * there, and says which registry and since when; a load replaces the registry's list; the operator
 * sees each registry's import date. Do-not-call entries (issue 20 §2) are removed only by a key of
 * the mode that added them.
 */
let svc: TestService;
let account: TestAccount & { liveApi?: any };

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url, { live: true });
});
test.after.always(async () => {
  await svc?.stop();
});

const DAY_S = 86_400;
const clockNow = async () => new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
const advance = (seconds: number) => account.admin.post('/admin/v1/test_clock/advance', { seconds });
const usRegistry = async () => (await account.admin.get('/admin/v1/dnc/registries')).body.data.find((r: { id: string }) => r.id === 'US-NDNC');
const load = (text: string, extra: Record<string, unknown> = {}) =>
  account.admin.post('/admin/v1/dnc/registry', { country: 'US', source: 'FTC file, test', text, ...extra });

test.serial('a registry never loaded holds calls to its country, named in readiness, coverage, the request and the console; loading it lets them through', async (t) => {
  // Nothing loaded yet: coverage of the US says which registry.
  const coverage = (await account.api.get('/v1/coverage?country=US')).body;
  const blocker = coverage.blockers.find((b: { code: string }) => b.code === 'dnc_registry_stale');
  t.regex(blocker?.message ?? '', /US National Do Not Call Registry \(US-NDNC\) has never been loaded/);
  t.is(coverage.sellable, false);
  t.like(await usRegistry(), { imported_at: null, current: false, max_age_days: 31 });

  const customer = await makeReadyCustomer(svc.url, account.api, {}, { loadRegistries: false });
  const readiness = (await account.api.get(`/v1/customers/${customer.id}/readiness`)).body;
  t.false(readiness.ready_for_test_calls);
  t.false(readiness.checks.dnc_registries_current);
  t.deepEqual(readiness.test_blockers.map((b: { code: string }) => b.code), ['dnc_registry_stale'], 'the one thing a test call waits on');
  t.like(readiness.test_blockers[0], { waiting_on: 'service', action: null });

  // Tuesday 15:00 UTC: 10:00 or 11:00 in Washington, inside every window.
  await advanceToNext(account, 2, 15);
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550182' });
  await account.admin.post('/admin/v1/dialler/run');
  const waiting = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.like(waiting, { status: 'queued', waiting_reason: 'dnc_registry_stale', dialed_at: null });
  t.regex(waiting.waiting_detail, /US National Do Not Call Registry \(US-NDNC\) has never been loaded/);

  // The operator loads it: the import date is shown, and the request is dialled.
  const loaded = await load('+12125550198');
  t.is(loaded.status, 200);
  const now = new Date(loaded.body.imported_at);
  t.true(Math.abs(now.getTime() - (await clockNow()).getTime()) < 5_000, 'dated on the service clock');
  t.like(loaded.body, { object: 'dnc_registry_import', registry: 'US-NDNC', country: 'US', numbers: 1, imported: 1, removed: 0 });
  t.is(loaded.body.stale_after, new Date(now.getTime() + 31 * DAY_S * 1000).toISOString());
  t.like(await usRegistry(), { imported_at: now.toISOString(), current: true, numbers: 1, source: 'FTC file, test' });
  const cli = await adminCli(svc.url, ['dnc-registries']);
  t.is(cli.code, 0);
  t.like(cli.out.data.find((x: { id: string }) => x.id === 'US-NDNC'), { imported_at: now.toISOString(), current: true });
  t.true((await account.api.get(`/v1/customers/${customer.id}/readiness`)).body.ready_for_test_calls);
  t.is((await account.api.get('/v1/coverage?country=US')).body.blockers.some((b: { code: string }) => b.code === 'dnc_registry_stale'), false);
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.truthy(done.dialed_at, 'dialled once the registry is loaded');
  t.is(done.waiting_detail, null);
});

test.serial('a load up to 31 days old counts; older, calls wait again, saying which registry and since when', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const loadedAt = new Date((await usRegistry()).imported_at);
  const staleSince = new Date(loadedAt.getTime() + 31 * DAY_S * 1000);
  // The test clock runs on from where it was moved: two seconds short of 31 days, then past them.
  await advance(Math.floor((staleSince.getTime() - (await clockNow()).getTime()) / 1000) - 2);
  t.like(await usRegistry(), { current: true }, 'just under 31 days old');
  t.true((await account.api.get(`/v1/customers/${customer.id}/readiness`)).body.ready_for_test_calls);

  await advance(3);
  t.like(await usRegistry(), { current: false, imported_at: loadedAt.toISOString() });
  const readiness = (await account.api.get(`/v1/customers/${customer.id}/readiness`)).body;
  t.deepEqual(readiness.test_blockers.map((b: { code: string }) => b.code), ['dnc_registry_stale']);
  const since = new RegExp(`US-NDNC\\) was last loaded on ${loadedAt.toISOString().slice(0, 10)}.*31 days.*since ${staleSince.toISOString()}`);
  t.regex(readiness.test_blockers[0].message, since);
  t.regex((await account.api.get('/v1/coverage?country=US')).body.blockers.find((b: { code: string }) => b.code === 'dnc_registry_stale').message, since);

  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550183' });
  await account.admin.post('/admin/v1/dialler/run');
  const waiting = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.like(waiting, { status: 'queued', waiting_reason: 'dnc_registry_stale', dialed_at: null });
  t.regex(waiting.waiting_detail, since);
  // A fresh load wakes it.
  await load('+12125550198');
  t.truthy((await dialUntilFinished(account, account.api, r.body.id)).dialed_at);
});

test.serial("a re-import replaces the registry's list: numbers that left it leave ours; the account's own entries stay", async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  await advanceToNext(account, 3, 15);
  const [LEFT, STAYS, OWN] = ['+12025550172', '+12025550175', '+12025550179'];
  t.like((await load([LEFT, STAYS].join('\n'))).body, { numbers: 2, imported: 2 });
  t.is((await account.api.post('/v1/dnc', { phone: OWN, reason: 'asked by email' })).status, 201);

  const replaced = await load(`phone_number\n${STAYS}\n${OWN}`);
  t.like(replaced.body, { numbers: 2, imported: 1, removed: 1 }, `${LEFT} left; ${OWN} came in`);
  t.like(await usRegistry(), { numbers: 2, current: true });
  // The number that left the registry is dialled; the one still on it is not.
  const left = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: LEFT });
  t.truthy((await dialUntilFinished(account, account.api, left.body.id)).dialed_at, 'off the registry now');
  const stays = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: STAYS });
  t.like(await dialUntilFinished(account, account.api, stays.body.id), { status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null });

  // A registry load never takes an entry off the account's own list.
  await load(STAYS);
  const own = (await account.api.get('/v1/dnc')).body.data.find((d: { phone: string }) => d.phone === OWN);
  t.like(own, { source: 'api', reason: 'asked by email' });
  const ownCall = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: OWN });
  t.like(await dialUntilFinished(account, account.api, ownCall.body.id), { status: 'blocked', outcome: 'do_not_call_listed' });
});

test.serial('a load is refused when it names no known registry of the country, or holds no number of it (it would empty the list)', async (t) => {
  const gb = await account.admin.post('/admin/v1/dnc/registry', { country: 'GB', source: 'TPS', text: '+442079460998' });
  t.like(gb.body.error, { code: 'dnc_registry_unknown' }, 'GB has two: TPS and CTPS');
  t.regex(gb.body.error.message, /GB-TPS \(GB\), GB-CTPS \(GB\)/);
  t.is((await account.admin.post('/admin/v1/dnc/registry', { country: 'DE', source: 'x', text: '+4930123456' })).body.error.code, 'dnc_registry_unknown');
  t.is((await account.admin.post('/admin/v1/dnc/registry', { country: 'US', registry: 'GB-TPS', source: 'x', text: '+12125550198' })).body.error.code, 'dnc_registry_unknown');
  const before = await usRegistry();
  for (const text of ['phone_number\n\n', 'not a number\n12345', '+442079460998']) {
    const r = await load(text);
    t.is(r.status, 400);
    t.is(r.body.error.code, 'dnc_registry_empty', text);
  }
  t.deepEqual(await usRegistry(), before, 'a refused load changes nothing');
  const tps = await account.admin.post('/admin/v1/dnc/registry', { country: 'GB', registry: 'GB-TPS', source: 'TPS 2026-11', text: '020 7946 0998' });
  t.like(tps.body, { registry: 'GB-TPS', country: 'GB', numbers: 1 });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ctps-')), 'ctps.csv');
  fs.writeFileSync(file, 'number\n020 7946 0998\n');
  const cli = await adminCli(svc.url, ['import-dnc', '--country', 'GB', '--registry', 'GB-CTPS', '--file', file, '--source', 'CTPS 2026-11']);
  t.is(cli.code, 0);
  t.like(cli.out, { registry: 'GB-CTPS', numbers: 1, source: 'CTPS 2026-11' });
});

test.serial('a do-not-call entry is removed only by a key of the mode that added it; a test key never relaxes live compliance', async (t) => {
  const live = account.liveApi!;
  t.is((await live.post('/v1/dnc', { phone: '+12025550191', reason: 'asked on a live call' })).status, 201);
  const refused = await account.api.delete('/v1/dnc/+12025550191');
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'dnc_entry_other_mode');
  t.regex(refused.body.error.message, /added with a live key; only a live key/);
  t.true((await live.get('/v1/dnc')).body.data.some((d: { phone: string }) => d.phone === '+12025550191'), 'still listed');
  t.like((await live.delete('/v1/dnc/+12025550191')).body, { deleted: true });

  // And the other way: a live key does not remove what a test key added.
  t.is((await account.api.post('/v1/dnc', { phone: '+12025550192' })).status, 201);
  t.is((await live.delete('/v1/dnc/+12025550192')).body.error.code, 'dnc_entry_other_mode');
  t.like((await account.api.delete('/v1/dnc/+12025550192')).body, { deleted: true });

  // An entry from before modes were recorded counts as live's.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    await db.query(`INSERT INTO dnc_numbers (account_id, e164, source, created_at) VALUES ($1, '+12025550193', 'api', now())`, [account.id]);
  } finally {
    await db.end();
  }
  t.is((await account.api.delete('/v1/dnc/+12025550193')).body.error.code, 'dnc_entry_other_mode');
  t.like((await live.delete('/v1/dnc/+12025550193')).body, { deleted: true });
});
