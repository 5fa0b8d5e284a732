import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { call } from '../helpers/http.ts';
import { consoleAs, consoleClientOf, CONSOLE_PASSWORD, sessionCookieOf } from '../helpers/console.ts';

/*
 * Issue 21, "Two surfaces": the console's JSON routes are authenticated by a session cookie
 * (HttpOnly, SameSite=Strict, Secure behind TLS) and protected against cross-site requests, and
 * every action checks the role on the server.
 */

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => svc?.stop());

test('accepting an invitation sets a password, signs the person in with an HttpOnly SameSite=Strict cookie, and the link is used up', async (t) => {
  const a = await makeAccount(svc.url);
  const invited = await a.admin.post(`/admin/v1/accounts/${a.id}/invitations`, { email: 'Owner@Acme.example' });
  t.is(invited.status, 201);
  t.like(invited.body, { object: 'console_invitation', email: 'owner@acme.example', role: 'owner', accepted_at: null });
  const token = new URL(invited.body.url).searchParams.get('token')!;
  t.true(invited.body.url.startsWith(`${svc.url}/console/accept?token=sbi_`));

  const peek = await call(svc.url, 'GET', `/console/api/invitations/${token}`);
  t.like(peek.body, { email: 'owner@acme.example', role: 'owner' });

  const weak = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Ada', password: 'short' } });
  t.is(weak.status, 400);
  t.is(weak.body.error.code, 'password_rejected');
  t.regex(weak.body.error.message, /at least 12 characters/);

  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Ada', password: CONSOLE_PASSWORD } });
  t.is(accepted.status, 200, accepted.text);
  const setCookie = accepted.headers.getSetCookie().find((c) => c.startsWith('sb_console='))!;
  t.regex(setCookie, /^sb_console=sbs_[0-9A-Za-z]{36}; /);
  t.regex(setCookie, /; HttpOnly/);
  t.regex(setCookie, /; SameSite=Strict/);
  t.regex(setCookie, /; Path=\/console/);
  t.notRegex(setCookie, /Secure/, 'plain http here: Secure would stop the browser sending it');
  t.like(accepted.body, { object: 'console_session', user: { email: 'owner@acme.example', name: 'Ada', role: 'owner', two_factor_enabled: false }, account: { id: a.id } });

  const again = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Eve', password: CONSOLE_PASSWORD } });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'invitation_invalid');

  const cookie = sessionCookieOf(accepted)!;
  const session = await call(svc.url, 'GET', '/console/api/session', { headers: { cookie } });
  t.is(session.status, 200);
  t.is(session.body.csrf_token, accepted.body.csrf_token);
});

test('without a session, with a made-up or signed-out one, console routes answer 401 console_session_required', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const tries: Record<string, string>[] = [{}, { cookie: 'sb_console=sbs_000000000000000000000000000000000000' }, { cookie: 'other=1' }, { authorization: `Bearer ${a.testKey}` }];
  for (const headers of tries) {
    const r = await call(svc.url, 'GET', '/console/api/session', { headers });
    t.is(r.status, 401, JSON.stringify(headers));
    t.is(r.body.error.code, 'console_session_required');
  }
  t.is((await owner.get('/console/api/session')).status, 200);
  const out = await owner.post('/console/api/sign_out');
  t.is(out.status, 200);
  t.regex(out.headers.getSetCookie()[0]!, /^sb_console=; .*Max-Age=0/);
  t.is((await owner.get('/console/api/session')).status, 401, 'the signed-out session is revoked on the server, not only forgotten by the browser');
});

test('a write needs the session CSRF token, and a write from another origin is refused', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const noToken = consoleClientOf(svc.url, owner.cookie, '', owner.user);
  const r = await noToken.post('/console/api/sign_out');
  t.is(r.status, 403);
  t.is(r.body.error.code, 'csrf_failed');
  const wrong = await consoleClientOf(svc.url, owner.cookie, owner.csrf.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), owner.user).post('/console/api/sign_out');
  t.is(wrong.body.error.code, 'csrf_failed');
  const foreign = await owner.post('/console/api/sign_out', undefined, { headers: { origin: 'https://evil.example' } });
  t.is(foreign.status, 403);
  t.is(foreign.body.error.code, 'csrf_failed');
  t.is((await owner.get('/console/api/session')).status, 200, 'none of the refused writes signed the person out');

  // Accepting an invitation has no session yet: only the Origin check guards it.
  const invited = await a.admin.post(`/admin/v1/accounts/${a.id}/invitations`, { email: 'dev@acme.example', role: 'developer' });
  const token = new URL(invited.body.url).searchParams.get('token')!;
  const crossSite = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Dev', password: CONSOLE_PASSWORD }, headers: { origin: 'https://evil.example' } });
  t.is(crossSite.status, 403);
  t.is(crossSite.body.error.code, 'csrf_failed');
});

test('the cookie is Secure when the service is reached over https', async (t) => {
  const { sessionCookie } = await import('../../http/plugins/console-session.ts');
  t.regex(sessionCookie('sbs_x', true, 60), /; Secure$/);
  t.notRegex(sessionCookie('sbs_x', false, 60), /Secure/);
});

test('the operator invites only into an account that exists, with a known role', async (t) => {
  const a = await makeAccount(svc.url);
  const missing = await a.admin.post('/admin/v1/accounts/00000000-0000-4000-8000-000000000000/invitations', { email: 'x@y.example' });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'account_not_found');
  const badRole = await a.admin.post(`/admin/v1/accounts/${a.id}/invitations`, { email: 'x@y.example', role: 'root' });
  t.is(badRole.status, 400);
  const noToken = await call(svc.url, 'POST', `/admin/v1/accounts/${a.id}/invitations`, { body: { email: 'x@y.example' } });
  t.is(noToken.status, 401);
});

test('a session ends 12 hours after its last request or 7 days after it began; requests move the idle clock at most once a minute', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const pool = svc.services.pool;
  const { rows } = await pool.query(`SELECT id, last_seen_at FROM console_sessions WHERE user_id = $1`, [owner.user.id]);
  const id = rows[0].id;
  const lastSeen = async () => (await pool.query(`SELECT last_seen_at FROM console_sessions WHERE id = $1`, [id])).rows[0].last_seen_at as Date;

  // Seen 30 seconds ago: a request writes nothing.
  await pool.query(`UPDATE console_sessions SET last_seen_at = now() - interval '30 seconds' WHERE id = $1`, [id]);
  const before = await lastSeen();
  t.is((await owner.get('/console/api/session')).status, 200);
  t.deepEqual(await lastSeen(), before, 'seen under a minute ago: not written again');

  // Seen 11 h 59 min ago: still open, and the request moves the idle clock to now.
  await pool.query(`UPDATE console_sessions SET last_seen_at = now() - interval '11 hours 59 minutes' WHERE id = $1`, [id]);
  t.is((await owner.get('/console/api/session')).status, 200);
  t.true(Date.now() - (await lastSeen()).getTime() < 60_000, 'the request moved last_seen_at forward');

  // 12 hours and a second without a request: ended.
  await pool.query(`UPDATE console_sessions SET last_seen_at = now() - interval '12 hours 1 second' WHERE id = $1`, [id]);
  t.is((await owner.get('/console/api/session')).body.error.code, 'console_session_required');

  // Busy all along, but begun 7 days ago: ended.
  const other = await consoleAs(svc.url, a.id, 'viewer');
  await pool.query(`UPDATE console_sessions SET created_at = now() - interval '7 days', expires_at = now() - interval '1 second' WHERE user_id = $1`, [other.user.id]);
  t.is((await other.get('/console/api/session')).status, 401);
});

test('the absolute limit is 7 days from sign-in and the cookie says so', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const { rows } = await svc.services.pool.query(`SELECT created_at, expires_at FROM console_sessions WHERE user_id = $1`, [owner.user.id]);
  t.is(rows[0].expires_at.getTime() - rows[0].created_at.getTime(), 7 * 24 * 3600 * 1000);
  const invited = await a.admin.post(`/admin/v1/accounts/${a.id}/invitations`, { email: 'maxage@acme.example' });
  const token = new URL(invited.body.url).searchParams.get('token')!;
  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'M', password: CONSOLE_PASSWORD } });
  t.regex(accepted.headers.getSetCookie()[0]!, /; Max-Age=604800/);
});

test('a suspended account’s people read, change their own security and sign out, and change nothing else', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/suspend`)).status, 200);
  t.is((await owner.get('/console/api/session')).body.account.status, 'suspended');
  t.is((await owner.get('/console/api/keys')).status, 200, 'reads go on');
  for (const [method, path, body] of [
    ['POST', '/console/api/keys', { mode: 'test', label: 'x' }],
    ['POST', '/console/api/customers', { name: 'Bright Dental', country: 'US' }],
    ['POST', '/console/api/webhook_endpoints', { url: 'https://example.com/hook', mode: 'test' }],
    ['POST', '/console/api/team/invitations', { email: 'x@acme.example', role: 'viewer' }],
    ['POST', '/console/api/test_clocks', { name: 'c' }],
  ] as const) {
    const r = method === 'POST' ? await owner.post(path, body) : await owner.get(path);
    t.is(r.status, 403, `${path}: ${r.text}`);
    t.is(r.body.error.code, 'reseller_suspended', path);
  }
  t.is((await owner.post('/console/api/two_factor/setup')).status, 200, 'their own two-factor');
  t.is((await owner.post('/console/api/sign_out')).status, 200, 'and signing out');
  await a.admin.post(`/admin/v1/accounts/${a.id}/reinstate`);
});

test('a session cookie shadowed by a planted one of the same name still signs the person in; three junk values do not', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const planted = `sb_console=sbs_${'0'.repeat(36)}; ${owner.cookie}`;
  t.is((await call(svc.url, 'GET', '/console/api/session', { headers: { cookie: planted } })).status, 200);
  t.is((await call(svc.url, 'GET', '/console/api/session', { headers: { cookie: `sb_console=junk; other=1; ${owner.cookie}` } })).status, 200);
  const buried = `sb_console=a; sb_console=b; sb_console=c; ${owner.cookie}`;
  t.is((await call(svc.url, 'GET', '/console/api/session', { headers: { cookie: buried } })).status, 401, 'only the first three values are looked up');
});

test('a name or label over its maximum is field_too_long, not a missing parameter', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id);
  const long = 'x'.repeat(201);
  const key = await owner.post('/console/api/keys', { mode: 'test', label: long });
  t.is(key.body.error.code, 'field_too_long');
  t.is((await owner.post('/console/api/keys', { mode: 'test', label: ' ' })).body.error.code, 'parameter_missing');
  t.is((await a.admin.post('/admin/v1/accounts', { name: long, country: 'US' })).body.error.code, 'field_too_long');
  const invited = await a.admin.post(`/admin/v1/accounts/${a.id}/invitations`, { email: 'long@acme.example' });
  const token = new URL(invited.body.url).searchParams.get('token')!;
  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: long, password: CONSOLE_PASSWORD } });
  t.is(accepted.body.error.code, 'field_too_long');
  t.is((await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 7, password: CONSOLE_PASSWORD } })).body.error.code, 'invalid_parameter');
});
