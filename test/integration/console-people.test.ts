import test from 'ava';
import { generate } from 'otplib';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { call, type Reply } from '../helpers/http.ts';
import { consoleAs, consoleClientOf, CONSOLE_PASSWORD, sessionCookieOf, type ConsoleClient } from '../helpers/console.ts';
import { TestClock } from '../../runtime/clock.ts';
import { outboxEmails, type OutboxEmail } from '../helpers/outbox.ts';

/*
 * Issue 21, "People and sign-in": sign-in with argon2id passwords, throttled per person and per
 * address; optional TOTP two-factor the owner can require; sessions listed and revocable;
 * password reset by link. The tests run one after another: they move real time (the wall clock).
 */

let svc: TestService;
/** Real time, moved by the tests: throttle windows, TOTP steps, the reset link's hour. */
const wall = new TestClock();
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_TRUST_PROXY: '1' }, { realClock: wall });
});
test.after.always(async () => svc?.stop());

/** Every secret the tests saw: none may appear in a log line (the last test). */
const secretsSeen = new Set<string>([CONSOLE_PASSWORD]);

let address = 0;
/** A client address of its own for each use, so one test's failures do not throttle another's. */
const nextAddress = () => `198.51.100.${++address}`;

function signIn(body: Record<string, unknown>, ip = nextAddress(), headers: Record<string, string> = {}): Promise<Reply> {
  return call(svc.url, 'POST', '/console/api/sign_in', { body, headers: { 'x-forwarded-for': ip, ...headers } });
}

/** The console client of a successful sign-in. */
function clientOf(r: Reply): ConsoleClient {
  const cookie = sessionCookieOf(r);
  if (r.status !== 200 || !cookie) throw new Error(`sign-in failed: ${r.status} ${r.text}`);
  secretsSeen.add(cookie.split('=')[1]!);
  return consoleClientOf(svc.url, cookie, r.body.csrf_token, { id: r.body.user.id, email: r.body.user.email, role: r.body.user.role });
}

/** The TOTP code of `secret` at the wall clock, `steps` periods of 30 s later. */
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(wall.now().getTime() / 1000) + 30 * steps });
/** A 6-digit code that is not the current one. */
const wrongCode = async (secret: string) => String((Number(await codeAt(secret)) + 500_000) % 1_000_000).padStart(6, '0');

async function person(role = 'owner') {
  const a = await makeAccount(svc.url);
  const client = await consoleAs(svc.url, a.id, role);
  secretsSeen.add(client.cookie.split('=')[1]!);
  return { account: a, client, email: client.user.email };
}

test.serial('sign-in with the right password opens a session and sets the cookie; a wrong password and an unknown address answer alike', async (t) => {
  const { account, email } = await person();
  const ok = await signIn({ email: email.toUpperCase(), password: CONSOLE_PASSWORD });
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { object: 'console_session', user: { email, role: 'owner', two_factor_enabled: false }, account: { id: account.id } });
  const setCookie = ok.headers.getSetCookie().find((c) => c.startsWith('sb_console='))!;
  t.regex(setCookie, /^sb_console=sbs_[0-9A-Za-z]{36}; Path=\/console; HttpOnly; SameSite=Strict/);
  const me = clientOf(ok);
  t.is((await me.get('/console/api/session')).status, 200);

  const wrong = await signIn({ email, password: 'not the password at all' });
  const unknown = await signIn({ email: 'nobody-here@agency.example', password: 'not the password at all' });
  for (const r of [wrong, unknown]) {
    t.is(r.status, 401);
    t.is(r.body.error.code, 'invalid_credentials');
    t.is(r.headers.getSetCookie().length, 0);
  }
  t.is(wrong.body.error.message, unknown.body.error.message);

  const crossSite = await signIn({ email, password: CONSOLE_PASSWORD }, nextAddress(), { origin: 'https://evil.example' });
  t.is(crossSite.status, 403);
  t.is(crossSite.body.error.code, 'csrf_failed');
});

test.serial('an unknown address takes about as long as a wrong password (both run argon2id)', async (t) => {
  const { email } = await person();
  const time = async (body: Record<string, unknown>) => {
    const started = process.hrtime.bigint();
    await signIn(body);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const wrong: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 3; i++) {
    wrong.push(await time({ email, password: `wrong password ${i}` }));
    unknown.push(await time({ email: `ghost-${i}@nowhere.example`, password: `wrong password ${i}` }));
  }
  // Without the dummy hash an unknown address answers in ~1 ms against tens of ms.
  t.true(median(unknown) > median(wrong) * 0.4, `unknown ${median(unknown)} ms, wrong ${median(wrong)} ms`);
});

test.serial('throttle per address: 10 failures in 15 minutes, then 429 with Retry-After, even with the right password; other addresses go on', async (t) => {
  const { email } = await person();
  const ip = nextAddress();
  for (let i = 0; i < 10; i++) {
    const r = await signIn({ email: `stranger-${i}@nowhere.example`, password: 'guessing guessing' }, ip);
    t.is(r.body.error.code, 'invalid_credentials', `attempt ${i + 1}`);
  }
  const blocked = await signIn({ email, password: CONSOLE_PASSWORD }, ip);
  t.is(blocked.status, 429);
  t.is(blocked.body.error.code, 'rate_limit_exceeded');
  const retry = Number(blocked.headers.get('retry-after'));
  t.true(retry > 800 && retry <= 900, `Retry-After ${retry}`);
  t.is((await signIn({ email, password: CONSOLE_PASSWORD })).status, 200, 'another address signs in');

  wall.advance(retry * 1000);
  t.is((await signIn({ email, password: CONSOLE_PASSWORD }, ip)).status, 200, 'after Retry-After the address may try again');
});

test.serial('throttle per person: 5 failures in 15 minutes from any addresses, then 429 for that person only', async (t) => {
  const { email } = await person();
  const other = await person();
  for (let i = 0; i < 5; i++) {
    const r = await signIn({ email, password: `guess number ${i}` });
    t.is(r.body.error.code, 'invalid_credentials');
  }
  const blocked = await signIn({ email, password: CONSOLE_PASSWORD });
  t.is(blocked.status, 429);
  t.is(blocked.body.error.code, 'rate_limit_exceeded');
  t.regex(blocked.headers.get('retry-after') ?? '', /^\d+$/);
  t.is((await signIn({ email: other.email, password: CONSOLE_PASSWORD })).status, 200, 'another person is not throttled');

  // An address nobody signs in with is throttled the same way: a 429 tells nothing about who exists.
  for (let i = 0; i < 5; i++) await signIn({ email: 'ghost@nowhere.example', password: `guess number ${i}` });
  t.is((await signIn({ email: 'ghost@nowhere.example', password: 'one more guess' })).status, 429);

  wall.advance(15 * 60_000 + 1000);
  t.is((await signIn({ email, password: CONSOLE_PASSWORD })).status, 200);
});

test.serial('two-factor: set up (issuer is the reseller account), enable with a code, then sign-in needs a code, refuses a wrong one and a replayed one', async (t) => {
  const { account, client: owner, email } = await person();
  t.is((await account.api.patch('/v1/brand', { display_name: 'Acme Voice' })).status, 200);

  const enableFirst = await owner.post('/console/api/two_factor/enable', { code: '123456' });
  t.is(enableFirst.status, 409);
  t.is(enableFirst.body.error.code, 'two_factor_not_set_up');

  const setup = await owner.post('/console/api/two_factor/setup');
  t.is(setup.status, 200, setup.text);
  const secret: string = setup.body.secret;
  secretsSeen.add(secret);
  t.regex(secret, /^[A-Z2-7]{32}$/);
  const url = new URL(setup.body.otpauth_url);
  t.is(url.protocol, 'otpauth:');
  t.is(url.searchParams.get('issuer'), 'Acme Voice');
  t.is(url.searchParams.get('secret'), secret);
  t.true(decodeURIComponent(setup.body.otpauth_url).startsWith(`otpauth://totp/Acme Voice:${email}?`), setup.body.otpauth_url);
  t.notRegex(setup.body.otpauth_url, /switchboard/i);
  t.false((await owner.get('/console/api/session')).body.user.two_factor_enabled, 'set up is not on');

  const wrong = await owner.post('/console/api/two_factor/enable', { code: await wrongCode(secret) });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'invalid_two_factor_code');
  const enableCode = await codeAt(secret);
  const enabled = await owner.post('/console/api/two_factor/enable', { code: enableCode });
  t.is(enabled.status, 200, enabled.text);
  t.deepEqual(enabled.body, { object: 'two_factor', enabled: true });
  t.true((await owner.get('/console/api/session')).body.user.two_factor_enabled);
  t.is((await owner.post('/console/api/two_factor/setup')).body.error.code, 'two_factor_already_enabled');

  const noCode = await signIn({ email, password: CONSOLE_PASSWORD });
  t.is(noCode.status, 401);
  t.is(noCode.body.error.code, 'two_factor_code_required');
  t.is(noCode.headers.getSetCookie().length, 0);
  const wrongPasswordRightCode = await signIn({ email, password: 'wrong password here', code: await codeAt(secret, 1) });
  t.is(wrongPasswordRightCode.body.error.code, 'invalid_credentials');
  const badCode = await signIn({ email, password: CONSOLE_PASSWORD, code: await wrongCode(secret) });
  t.is(badCode.status, 401);
  t.is(badCode.body.error.code, 'invalid_two_factor_code');
  const enableReplayed = await signIn({ email, password: CONSOLE_PASSWORD, code: enableCode });
  t.is(enableReplayed.body.error.code, 'invalid_two_factor_code', 'the code that enabled two-factor is used up');

  wall.advance(30_000);
  const code = await codeAt(secret);
  const ok = await signIn({ email, password: CONSOLE_PASSWORD, code });
  t.is(ok.status, 200, ok.text);
  t.true(ok.body.user.two_factor_enabled);
  const replay = await signIn({ email, password: CONSOLE_PASSWORD, code });
  t.is(replay.status, 401);
  t.is(replay.body.error.code, 'invalid_two_factor_code', 'a code is accepted once');

  // Turning it off needs the password and a fresh code.
  wall.advance(30_000);
  const noPassword = await owner.post('/console/api/two_factor/disable', { code: await codeAt(secret), password: 'wrong password here' });
  t.is(noPassword.body.error.code, 'invalid_credentials');
  const off = await owner.post('/console/api/two_factor/disable', { code: await codeAt(secret), password: CONSOLE_PASSWORD });
  t.is(off.status, 200, off.text);
  t.is((await signIn({ email, password: CONSOLE_PASSWORD })).status, 200, 'no code needed once off');
});

test.serial('when the owner requires two-factor, a member without it can only set it up (and read the session, sign out)', async (t) => {
  const { account, client: owner } = await person();
  const dev = await consoleAs(svc.url, account.id, 'developer');
  secretsSeen.add(dev.cookie.split('=')[1]!);
  const viewerTry = await (await consoleAs(svc.url, account.id, 'viewer')).patch('/console/api/security', { require_two_factor: true });
  t.is(viewerTry.status, 403);
  t.is(viewerTry.body.error.code, 'role_forbidden');

  const notYet = await owner.patch('/console/api/security', { require_two_factor: true });
  t.is(notYet.status, 409, 'whoever requires two-factor must have it');
  t.is(notYet.body.error.code, 'two_factor_not_enabled');
  const ownerSetup = await owner.post('/console/api/two_factor/setup');
  secretsSeen.add(ownerSetup.body.secret);
  t.is((await owner.post('/console/api/two_factor/enable', { code: await codeAt(ownerSetup.body.secret) })).status, 200);
  const required = await owner.patch('/console/api/security', { require_two_factor: true });
  t.deepEqual(required.body, { object: 'console_security', require_two_factor: true });

  const blocked = await dev.get('/console/api/team');
  t.is(blocked.status, 403);
  t.is(blocked.body.error.code, 'two_factor_setup_required');
  t.is((await dev.get('/console/api/sessions')).body.error.code, 'two_factor_setup_required');
  t.true((await dev.get('/console/api/session')).body.account.require_two_factor);
  const setup = await dev.post('/console/api/two_factor/setup');
  t.is(setup.status, 200);
  secretsSeen.add(setup.body.secret);
  t.is((await dev.post('/console/api/two_factor/enable', { code: await codeAt(setup.body.secret) })).status, 200);
  t.is((await dev.get('/console/api/team')).status, 200, 'with two-factor on, the member goes on');

  const viewer = await consoleAs(svc.url, account.id, 'viewer');
  t.is((await viewer.get('/console/api/team')).body.error.code, 'two_factor_setup_required');
  t.deepEqual((await owner.patch('/console/api/security', { require_two_factor: false })).body, { object: 'console_security', require_two_factor: false });
  t.is((await viewer.get('/console/api/team')).status, 200, 'no longer required: the viewer goes on');
});

test.serial('sessions: each person lists their own (current marked); a revoked session answers 401 at once; owner and admin see and revoke the team’s', async (t) => {
  const { account, client: owner, email } = await person();
  const second = clientOf(await signIn({ email, password: CONSOLE_PASSWORD }, '192.0.2.44', { 'user-agent': 'Laptop Browser/1.0' } as Record<string, string>));
  const list = await owner.get('/console/api/sessions');
  t.is(list.status, 200);
  t.is(list.body.object, 'list');
  t.is(list.body.data.length, 2);
  const mine = list.body.data.find((s: any) => s.current);
  const other = list.body.data.find((s: any) => !s.current);
  t.like(other, { object: 'console_session_entry', ip: '192.0.2.44', user_agent: 'Laptop Browser/1.0', email });
  t.truthy(Date.parse(other.created_at) && Date.parse(other.last_seen_at) && Date.parse(mine.expires_at));

  const page = await owner.get('/console/api/sessions?limit=1');
  t.true(page.body.has_more);
  const next = await owner.get(`/console/api/sessions?limit=1&starting_after=${page.body.data[0].id}`);
  t.false(next.body.has_more);
  t.not(next.body.data[0].id, page.body.data[0].id);

  const revoked = await owner.delete(`/console/api/sessions/${other.id}`);
  t.deepEqual(revoked.body, { object: 'console_session_revoked', id: other.id });
  const gone = await second.get('/console/api/session');
  t.is(gone.status, 401);
  t.is(gone.body.error.code, 'console_session_required');

  const dev = await consoleAs(svc.url, account.id, 'developer');
  const devSession = (await dev.get('/console/api/sessions')).body.data[0];
  t.is((await dev.get('/console/api/sessions?scope=team')).body.error.code, 'role_forbidden');
  const ownerSessionId = mine.id;
  const notHis = await dev.delete(`/console/api/sessions/${ownerSessionId}`);
  t.is(notHis.status, 404, 'a developer cannot revoke the owner’s session');
  t.is(notHis.body.error.code, 'console_session_not_found');

  const team = await owner.get('/console/api/sessions?scope=team');
  t.true(team.body.data.some((s: any) => s.id === devSession.id && s.user_id === dev.user.id));
  t.is((await owner.delete(`/console/api/sessions/${devSession.id}`)).status, 200);
  t.is((await dev.get('/console/api/session')).status, 401);

  // Another account's session: 404 as an unknown id; its own cursor is no cursor here.
  const stranger = await person();
  const strangerSession = (await stranger.client.get('/console/api/sessions')).body.data[0].id;
  for (const id of [strangerSession, '00000000-0000-4000-8000-000000000000', 'junk']) {
    const r = await owner.delete(`/console/api/sessions/${id}`);
    t.is(r.status, 404, id);
    t.is(r.body.error.code, 'console_session_not_found');
  }
  t.is((await owner.get(`/console/api/sessions?starting_after=${strangerSession}`)).body.error.code, 'invalid_cursor');
  t.is((await stranger.client.get('/console/api/session')).status, 200, 'the stranger was not signed out');
});

test.serial('changing the password needs the current one and ends the person’s other sessions, not this one', async (t) => {
  const { client: me, email } = await person();
  const elsewhere = clientOf(await signIn({ email, password: CONSOLE_PASSWORD }));
  const wrong = await me.post('/console/api/password', { current_password: 'not my password', new_password: 'a brand new passphrase' });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'invalid_credentials');
  const weak = await me.post('/console/api/password', { current_password: CONSOLE_PASSWORD, new_password: 'short' });
  t.is(weak.body.error.code, 'password_rejected');
  const changed = await me.post('/console/api/password', { current_password: CONSOLE_PASSWORD, new_password: 'a brand new passphrase' });
  t.deepEqual(changed.body, { object: 'password_changed', revoked_sessions: 1 });
  secretsSeen.add('a brand new passphrase');
  t.is((await elsewhere.get('/console/api/session')).status, 401);
  t.is((await me.get('/console/api/session')).status, 200);
  t.is((await signIn({ email, password: CONSOLE_PASSWORD })).body.error.code, 'invalid_credentials');
  t.is((await signIn({ email, password: 'a brand new passphrase' })).status, 200);
});

test.serial('password reset requests at once for one person write at most 3 links (counted with the person locked, in the reset\'s transaction)', async (t) => {
  const { email } = await person();
  const answers = await Promise.all(Array.from({ length: 8 }, () => call(svc.url, 'POST', '/console/api/password_resets', { body: { email } })));
  t.true(answers.every((r) => r.status === 202));
  // The requests are answered before their links are written: wait until the count settles.
  let n = -1;
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = (await outboxEmails(svc.databaseUrl, { kind: 'password_reset', to: email })).length;
    if (now === n && i > 10) break;
    n = now;
  }
  t.is(n, 3);
});

test.serial('password reset: 202 whatever the address; the link is emailed, works once, within the hour, and ends every session of the person', async (t) => {
  const { account, client: me, email } = await person();
  const resets = () => outboxEmails(svc.databaseUrl, { kind: 'password_reset' });
  const before = (await resets()).length;
  const known = await call(svc.url, 'POST', '/console/api/password_resets', { body: { email } });
  const unknown = await call(svc.url, 'POST', '/console/api/password_resets', { body: { email: 'nobody-at-all@nowhere.example' } });
  for (const r of [known, unknown]) {
    t.is(r.status, 202);
    t.deepEqual(r.body, { object: 'password_reset_requested' });
  }
  // The link is an email to the person (issue 22), its URL sealed in the outbox.
  let links: OutboxEmail[] = [];
  for (let i = 0; i < 50 && links.length === 0; i++) {
    links = await outboxEmails(svc.databaseUrl, { kind: 'password_reset', to: email });
    if (links.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  t.is(links.length, 1);
  t.is((await resets()).length, before + 1, 'nothing for the unknown address');
  t.like(links[0], { account_id: account.id, audience: 'person', to_address: email.toLowerCase() });
  t.regex(links[0]!.dedupe_key, /^password_reset:[0-9a-f-]{36}$/);
  t.deepEqual(Object.keys(links[0]!.data), ['expires_at']);
  t.true(Math.abs(Date.parse(links[0]!.data.expires_at) - wall.now().getTime() - 3600_000) < 5_000, 'the link works for an hour');
  t.true(links[0]!.secret!.startsWith(`${svc.url}/console/reset?token=sbr_`));
  t.false(JSON.stringify(links[0]!.data).includes('sbr_'), 'the token is only in the sealed secret');
  const token = new URL(links[0]!.secret!).searchParams.get('token')!;
  secretsSeen.add(token);

  const weak = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token, password: 'short' } });
  t.is(weak.body.error.code, 'password_rejected');
  const done = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token, password: 'reset passphrase number one' } });
  t.is(done.status, 200, done.text);
  t.deepEqual(done.body, { object: 'password_reset_completed' });
  secretsSeen.add('reset passphrase number one');
  t.is((await me.get('/console/api/session')).status, 401, 'every session of the person ended');
  t.is((await signIn({ email, password: 'reset passphrase number one' })).status, 200);

  const again = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token, password: 'reset passphrase number two' } });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'password_reset_invalid');
  const junk = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token: 'sbr_nonsense', password: 'reset passphrase number two' } });
  t.is(junk.body.error.code, 'password_reset_invalid');
});

test.serial('a reset link minted by the owner expires after an hour; an admin cannot mint one for an owner', async (t) => {
  const { account, client: owner } = await person();
  const dev = await consoleAs(svc.url, account.id, 'developer');
  const admin = await consoleAs(svc.url, account.id, 'admin');
  const minted = await owner.post(`/console/api/team/members/${dev.user.id}/password_reset`);
  t.is(minted.status, 201, minted.text);
  t.true(minted.body.url.startsWith(`${svc.url}/console/reset?token=sbr_`));
  t.is(Date.parse(minted.body.expires_at) - wall.now().getTime() <= 3_600_000, true);
  const token = new URL(minted.body.url).searchParams.get('token')!;
  secretsSeen.add(token);
  t.is((await admin.post(`/console/api/team/members/${owner.user.id}/password_reset`)).body.error.code, 'owner_protected');

  wall.advance(3_600_000 + 1000);
  const late = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token, password: 'too late for this one' } });
  t.is(late.status, 404);
  t.is(late.body.error.code, 'password_reset_invalid');

  // The operator mints one too (the owner locked out alone).
  const op = await account.admin.post(`/admin/v1/accounts/${account.id}/people/${owner.user.id}/password_reset`);
  t.is(op.status, 201);
  const opToken = new URL(op.body.url).searchParams.get('token')!;
  secretsSeen.add(opToken);
  t.is((await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token: opToken, password: 'operator made this one' } })).status, 200);
  const otherAccount = await makeAccount(svc.url);
  t.is((await account.admin.post(`/admin/v1/accounts/${otherAccount.id}/people/${owner.user.id}/password_reset`)).body.error.code, 'console_member_not_found');
});

test.serial('malformed bodies are 4xx in the error shape, never 5xx', async (t) => {
  const { client: me } = await person();
  const tries: Array<[string, unknown]> = [
    ['/console/api/sign_in', {}],
    ['/console/api/sign_in', { email: 5, password: null }],
    ['/console/api/sign_in', { email: 'a@b.example', password: 'x'.repeat(2000) }],
    ['/console/api/sign_in', { email: 'a@b.example', password: 'long enough password', code: ['1'] }],
    ['/console/api/sign_in', { email: 'a@b.example', password: 'long enough password', extra: 1 }],
    ['/console/api/password_resets', { email: {} }],
    ['/console/api/password_resets/complete', { token: 'sbr_x', password: 7 }],
    ['/console/api/password_resets/complete', { token: 'sbr_\u0000', password: 'long enough password' }],
  ];
  for (const [path, body] of tries) {
    const r = await call(svc.url, 'POST', path, { body, headers: { 'x-forwarded-for': nextAddress() } });
    t.true(r.status >= 400 && r.status < 500, `${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
    t.regex(r.body.error?.code ?? '', /^[a-z_]+$/);
  }
  for (const [path, body] of [
    ['/console/api/two_factor/enable', { code: 123456 }],
    ['/console/api/two_factor/disable', {}],
    ['/console/api/password', { current_password: [], new_password: 'x' }],
  ] as Array<[string, unknown]>) {
    const r = await me.post(path, body);
    t.true(r.status >= 400 && r.status < 500, `${path}: ${r.status} ${r.text}`);
  }
  t.is((await me.get('/console/api/sessions?limit=0')).status, 400);
  t.is((await me.get('/console/api/sessions?scope=everyone')).status, 400);
  t.is((await me.get('/console/api/sessions?starting_after=nonsense')).body.error.code, 'invalid_cursor');
});

test.serial('no password, two-factor secret, token or cookie appears in any log line', async (t) => {
  // A request that fails inside a handler with a secret in its body, for good measure.
  await signIn({ email: 'logs@nowhere.example', password: 'log-me-not passphrase' });
  secretsSeen.add('log-me-not passphrase');
  t.true(svc.logs.lines.length > 20);
  const text = svc.logs.lines.map((l) => JSON.stringify(l)).join('\n');
  for (const secret of secretsSeen) t.false(text.includes(secret), `a log line holds ${secret.slice(0, 6)}…`);
  t.false(/sbs_[0-9A-Za-z]{36}|sbi_[0-9A-Za-z]{36}|sbr_[0-9A-Za-z]{36}/.test(text));
  t.false(/otpauth:/.test(text));
});
