import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { call } from '../helpers/http.ts';
import { consoleAs, consoleClientOf, CONSOLE_PASSWORD } from '../helpers/console.ts';

/*
 * Several API processes on one database (pm2's cluster mode): a console session, a role, a
 * sign-out and the sign-in throttle are in PostgreSQL, so every process sees a change at its
 * next request: none keeps a copy that could let a revoked session or an old role through.
 */

let a: TestService;
let b: TestService;
test.before(async () => {
  a = await startTestService({ SWITCHBOARD_RATE_LIMIT_STORE: 'postgres' });
  b = await startTestService({ DATABASE_URL: a.databaseUrl, SWITCHBOARD_RATE_LIMIT_STORE: 'postgres' });
});
test.after.always(async () => {
  await b?.stop();
  await a?.stop();
});

test('a session opened on one process works on the other; a role changed or a sign-out on one applies on the other at once', async (t) => {
  const account = await makeAccount(a.url);
  const ownerOnA = await consoleAs(a.url, account.id, 'owner');
  const viewerOnA = await consoleAs(a.url, account.id, 'viewer');
  const viewerOnB = consoleClientOf(b.url, viewerOnA.cookie, viewerOnA.csrf, viewerOnA.user);
  t.is((await viewerOnB.get('/console/api/session')).body.user.role, 'viewer');
  t.is((await viewerOnB.post('/console/api/keys', { mode: 'test', label: 'x' })).body.error.code, 'role_forbidden');

  t.is((await ownerOnA.patch(`/console/api/team/members/${viewerOnA.user.id}`, { role: 'developer' })).status, 200);
  const created = await viewerOnB.post('/console/api/keys', { mode: 'test', label: 'made on b' });
  t.is(created.status, 201, 'process b used the new role on the very next request');

  t.is((await viewerOnB.post('/console/api/sign_out')).status, 200);
  t.is((await viewerOnA.get('/console/api/session')).body.error.code, 'console_session_required', 'signed out on b: refused on a');
});

test('failed sign-ins are counted across processes', async (t) => {
  const account = await makeAccount(a.url);
  const owner = await consoleAs(a.url, account.id, 'owner');
  const attempt = (svc: TestService) =>
    call(svc.url, 'POST', '/console/api/sign_in', { body: { email: owner.user.email, password: 'not the password at all' }, headers: { 'x-forwarded-for': '198.51.100.7' } });
  const answers: number[] = [];
  for (let i = 0; i < 6; i++) answers.push((await attempt(i % 2 ? b : a)).status);
  t.deepEqual(answers.slice(0, 5), [401, 401, 401, 401, 401]);
  t.is(answers[5], 429, 'the sixth failure for one person is throttled, whichever process it reaches (5 per person per 15 minutes)');
  const right = await call(b.url, 'POST', '/console/api/sign_in', { body: { email: owner.user.email, password: CONSOLE_PASSWORD } });
  t.is(right.status, 429, 'throttled even with the right password until the window passes');
});
