import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { hashToken } from '../../runtime/tokens.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const form = (fields: Record<string, string>) => ({
  rawBody: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});
const pathOf = (url: string) => new URL(url).pathname;

test('minting returns the URL once; only its hash is stored; the list never shows it', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  t.is(r.status, 201);
  t.like(r.body, { object: 'onboarding_link', customer_id: c.id, status: 'active', expires_in_days: 30, completed_at: null, accepted_by: null });
  t.true(r.body.url.startsWith(`${svc.url}/onboarding/ob_`));
  const token = pathOf(r.body.url).split('/').pop()!;
  t.true(token.startsWith(r.body.prefix));
  t.is(new Date(r.body.expires_at).getTime() - new Date(r.body.created_at).getTime(), 30 * 86_400_000);

  const list = await a.api.get(`/v1/customers/${c.id}/onboarding_link`);
  t.is(list.body.data.length, 1);
  t.is(list.body.data[0].url, undefined);
  t.is(list.body.data[0].expires_in_days, undefined);

  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const dump = JSON.stringify((await db.query('SELECT * FROM onboarding_links')).rows) + JSON.stringify((await db.query('SELECT * FROM idempotency_keys')).rows);
  const stored = (await db.query('SELECT token_hash FROM onboarding_links WHERE id = $1', [r.body.id])).rows[0].token_hash;
  await db.end();
  t.false(dump.includes(token));
  t.true(Buffer.from(stored).equals(hashToken(token)));
});

test('minting again replaces the previous link; lists are newest first', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const first = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  const second = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  const list = await a.api.get(`/v1/customers/${c.id}/onboarding_link`);
  t.deepEqual(list.body.data.map((l: any) => [l.id, l.status]), [
    [second.body.id, 'active'],
    [first.body.id, 'replaced'],
  ]);
  const old = await call(svc.url, 'GET', pathOf(first.body.url));
  t.is(old.status, 410);
  t.regex(old.text, /replaced/);
  const accept = await call(svc.url, 'POST', pathOf(first.body.url), form({ accepted_by: 'Eve', agree: 'yes' }));
  t.is(accept.status, 410, 'a replaced link cannot be accepted');
});

test('accepting completes the link, records who accepted, and clears customer_not_attested', async (t) => {
  const a = await makeAccount(svc.url);
  await a.api.patch('/v1/brand', { display_name: 'Northwind Calls', primary_color: '#123456' });
  const c = await makeCustomer(a.api, { name: 'Bright Dental' });
  const link = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  const page = await call(svc.url, 'GET', pathOf(link.body.url));
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type')!, /text\/html/);
  t.is(page.headers.get('cache-control'), 'no-store');
  t.regex(page.text, /Northwind Calls/);
  t.regex(page.text, /#123456/);
  t.regex(page.text, /Bright Dental/);
  t.notRegex(page.text, /switchboard|twilio|openai/i);

  const missing = await call(svc.url, 'POST', pathOf(link.body.url), form({ accepted_by: '', agree: 'yes' }));
  t.is(missing.status, 400);
  const unticked = await call(svc.url, 'POST', pathOf(link.body.url), form({ accepted_by: 'Jane' }));
  t.is(unticked.status, 400);

  const ok = await call(svc.url, 'POST', pathOf(link.body.url), form({ accepted_by: '  Jane <b>Doe</b> ', agree: 'yes' }));
  t.is(ok.status, 200);
  t.regex(ok.text, /Thank you, Jane &lt;b&gt;Doe&lt;\/b&gt;/, 'escaped');
  t.notRegex(ok.text, /switchboard/i);

  const list = await a.api.get(`/v1/customers/${c.id}/onboarding_link`);
  t.like(list.body.data[0], { status: 'completed', accepted_by: 'Jane <b>Doe</b>' });
  t.truthy(list.body.data[0].completed_at);
  const readiness = await a.api.get(`/v1/customers/${c.id}/readiness`);
  t.false(readiness.body.blockers.some((b: any) => b.code === 'customer_not_attested'));
  t.true(readiness.body.checks.customer_accepted_terms);

  const again = await call(svc.url, 'GET', pathOf(link.body.url));
  t.regex(again.text, /Already accepted/);
  const twice = await call(svc.url, 'POST', pathOf(link.body.url), form({ accepted_by: 'Mallory', agree: 'yes' }));
  t.regex(twice.text, /Already accepted/);
  t.is((await a.api.get(`/v1/customers/${c.id}/onboarding_link`)).body.data[0].accepted_by, 'Jane <b>Doe</b>');
});

test.serial('an expired link shows a clear page and cannot be accepted', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const link = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 30 * 86_400 + 1 });
  const page = await call(svc.url, 'GET', pathOf(link.body.url));
  t.is(page.status, 410);
  t.regex(page.text, /expired/);
  const post = await call(svc.url, 'POST', pathOf(link.body.url), form({ accepted_by: 'Late', agree: 'yes' }));
  t.is(post.status, 410);
  const list = await a.api.get(`/v1/customers/${c.id}/onboarding_link`);
  t.is(list.body.data[0].status, 'expired');
  t.true((await a.api.get(`/v1/customers/${c.id}/readiness`)).body.blockers.some((b: any) => b.code === 'customer_not_attested'));
});

test('a bad or unknown token gets a plain page, never a stack trace', async (t) => {
  for (const path of ['/onboarding/nonsense', '/onboarding/ob_0000000000000000000000000000000000AA', `/onboarding/${'x'.repeat(300)}`]) {
    const r = await call(svc.url, 'GET', path);
    t.true(r.status === 404 || r.status === 400, path);
    t.notRegex(r.text, /at .*\.ts:\d+|Error:|switchboard/i);
  }
});

test('a form body the page cannot read is 415, 400 or 413 with a plain page, before any token is looked at, and logs no stack', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const link = pathOf((await a.api.post(`/v1/customers/${c.id}/onboarding_link`)).body.url);
  const before = svc.logs.lines.length;
  for (const path of ['/onboarding/anything', link]) {
    const cases: [string, { rawBody: string; headers: Record<string, string> }, number][] = [
      ['text/plain', { rawBody: 'accepted_by=Eve&agree=yes', headers: { 'content-type': 'text/plain' } }, 415],
      ['invalid JSON', { rawBody: '{"accepted_by":', headers: { 'content-type': 'application/json' } }, 400],
      ['a form over 16 KB', { rawBody: `accepted_by=${'E'.repeat(17 * 1024)}&agree=yes`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 413],
    ];
    for (const [what, body, status] of cases) {
      const r = await call(svc.url, 'POST', path, body);
      t.is(r.status, status, `${path}: ${what}`);
      t.regex(r.headers.get('content-type') ?? '', /^text\/html/, what);
      t.regex(r.text, /Not accepted/, what);
      t.notRegex(r.text, /at .*\.ts:\d+|Error:|switchboard/i, what);
    }
  }
  const logged = svc.logs.lines.slice(before);
  t.deepEqual(logged.filter((l) => Number(l.level) >= 50), [], 'nothing is logged as an error');
  t.false(logged.some((l) => JSON.stringify(l).includes('"stack"')), 'no stack');
  t.is((await a.api.get(`/v1/customers/${c.id}/onboarding_link`)).body.data[0].status, 'active', 'the link is untouched');
});
