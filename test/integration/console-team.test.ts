import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient, makeAccount } from '../helpers/factories.ts';
import { call } from '../helpers/http.ts';
import { adminCli } from '../helpers/admin-cli.ts';
import { consoleAs, CONSOLE_PASSWORD, sessionCookieOf } from '../helpers/console.ts';

/*
 * Issue 21, "People and sign-in" and the Team page: members, invitations, roles, two-factor
 * status. Only owners and admins change the team; an admin cannot touch an owner; an account
 * keeps at least one owner; nobody changes their own role.
 */

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => svc?.stop());

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

test('the team lists members with role, two-factor status and last sign-in, and pending invitations', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const invited = await owner.post('/console/api/team/invitations', { email: 'New.Dev@Agency.example', role: 'developer' });
  t.is(invited.status, 201, invited.text);
  t.like(invited.body, { object: 'console_invitation', email: 'new.dev@agency.example', role: 'developer', accepted_at: null });
  t.true(invited.body.url.startsWith(`${svc.url}/console/accept?token=sbi_`), 'the link is shown to the inviter');

  const team = await viewer.get('/console/api/team');
  t.is(team.status, 200, team.text);
  t.is(team.body.object, 'console_team');
  t.false(team.body.require_two_factor);
  t.is(team.body.members.length, 2);
  const ownerRow = team.body.members.find((m: any) => m.id === owner.user.id);
  t.like(ownerRow, { object: 'console_member', email: owner.user.email, role: 'owner', two_factor_enabled: false, name: 'The owner' });
  t.truthy(Date.parse(ownerRow.last_sign_in_at));
  t.is(team.body.invitations.length, 1);
  t.like(team.body.invitations[0], { id: invited.body.id, email: 'new.dev@agency.example', role: 'developer' });
  t.is(team.body.invitations[0].url, undefined, 'the link is never shown again');

  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token: tokenOf(invited.body.url), name: 'Dev', password: CONSOLE_PASSWORD } });
  t.is(accepted.status, 200);
  const after = await owner.get('/console/api/team');
  t.is(after.body.members.length, 3);
  t.is(after.body.invitations.length, 0, 'an accepted invitation is no longer pending');
});

test('only owners and admins invite; an admin cannot invite an owner; a withdrawn invitation cannot be accepted', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const admin = await consoleAs(svc.url, a.id, 'admin');
  for (const role of ['viewer', 'developer', 'billing']) {
    const r = await (await consoleAs(svc.url, a.id, role)).post('/console/api/team/invitations', { email: `x-${role}@agency.example`, role: 'viewer' });
    t.is(r.status, 403, role);
    t.is(r.body.error.code, 'role_forbidden');
    t.regex(r.body.error.message, /owner, admin/);
  }
  const ownerByAdmin = await admin.post('/console/api/team/invitations', { email: 'boss@agency.example', role: 'owner' });
  t.is(ownerByAdmin.status, 403);
  t.is(ownerByAdmin.body.error.code, 'owner_protected');
  t.is((await owner.post('/console/api/team/invitations', { email: 'boss@agency.example', role: 'owner' })).status, 201, 'an owner may');
  t.is((await admin.post('/console/api/team/invitations', { email: owner.user.email, role: 'viewer' })).body.error.code, 'email_taken');
  const elsewhere = await consoleAs(svc.url, (await makeAccount(svc.url)).id, 'viewer');
  const notTold = await admin.post('/console/api/team/invitations', { email: elsewhere.user.email, role: 'viewer' });
  t.is(notTold.status, 201, 'whether an address signs in to another account is not told');
  t.is((await admin.post('/console/api/team/invitations', { email: 'x@y.example', role: 'root' })).status, 400);

  const inv = await admin.post('/console/api/team/invitations', { email: 'temp@agency.example', role: 'billing' });
  const withdrawn = await admin.delete(`/console/api/team/invitations/${inv.body.id}`);
  t.is(withdrawn.status, 200, withdrawn.text);
  t.is(withdrawn.body.id, inv.body.id);
  t.is((await admin.delete(`/console/api/team/invitations/${inv.body.id}`)).body.error.code, 'console_invitation_not_found');
  const accept = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token: tokenOf(inv.body.url), name: 'Temp', password: CONSOLE_PASSWORD } });
  t.is(accept.status, 404);
  t.is(accept.body.error.code, 'invitation_invalid');
  const ownerInvitation = (await owner.get('/console/api/team')).body.invitations.find((i: any) => i.role === 'owner');
  t.is((await admin.delete(`/console/api/team/invitations/${ownerInvitation.id}`)).body.error.code, 'owner_protected');
});

test('role rules: an admin cannot touch an owner or make one, nobody changes their own role, the last owner stays', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const admin = await consoleAs(svc.url, a.id, 'admin');
  const dev = await consoleAs(svc.url, a.id, 'developer');
  const members = (path: string) => `/console/api/team/members/${path}`;

  const promote = await admin.patch(members(dev.user.id), { role: 'billing' });
  t.is(promote.status, 200, promote.text);
  t.like(promote.body, { object: 'console_member', id: dev.user.id, role: 'billing' });
  t.is((await dev.get('/console/api/session')).body.user.role, 'billing', 'the new role applies to the open session at once');

  t.is((await admin.patch(members(dev.user.id), { role: 'owner' })).body.error.code, 'owner_protected');
  t.is((await admin.patch(members(owner.user.id), { role: 'viewer' })).body.error.code, 'owner_protected');
  t.is((await admin.delete(members(owner.user.id))).body.error.code, 'owner_protected');
  t.is((await admin.patch(members(admin.user.id), { role: 'owner' })).body.error.code, 'own_role_unchangeable');
  t.is((await admin.delete(members(admin.user.id))).body.error.code, 'own_role_unchangeable');
  t.is((await dev.patch(members(dev.user.id), { role: 'admin' })).body.error.code, 'role_forbidden');

  const selfDemote = await owner.patch(members(owner.user.id), { role: 'admin' });
  t.is(selfDemote.status, 403);
  t.is(selfDemote.body.error.code, 'own_role_unchangeable');

  // Two owners: one may demote the other, then the one left is the last.
  t.is((await owner.patch(members(admin.user.id), { role: 'owner' })).body.role, 'owner');
  const demoted = await admin.patch(members(owner.user.id), { role: 'admin' });
  t.is(demoted.body.role, 'admin');
  const last = await owner.patch(members(admin.user.id), { role: 'viewer' });
  t.is(last.status, 403, 'now an admin, the former owner cannot touch the owner');
  t.is(last.body.error.code, 'owner_protected');

  // The last-owner rule itself (pure; a single owner can only meet it through their own row).
  const { memberChangeProblem } = await import('../../actors/console/team-rules.ts');
  t.is(memberChangeProblem({ actorId: 'a', actorRole: 'owner', targetId: 'b', targetRole: 'owner', newRole: 'admin', owners: 1 }), 'last_owner');
  t.is(memberChangeProblem({ actorId: 'a', actorRole: 'owner', targetId: 'b', targetRole: 'owner', newRole: null, owners: 1 }), 'last_owner');
  t.is(memberChangeProblem({ actorId: 'a', actorRole: 'owner', targetId: 'b', targetRole: 'owner', newRole: null, owners: 2 }), null);

  const team = (await owner.get('/console/api/team')).body.members;
  t.is(team.filter((m: any) => m.role === 'owner').length, 1, 'there is always an owner');
});

test('the last owner cannot be demoted or removed, even by another owner racing them', async (t) => {
  const a = await makeAccount(svc.url);
  const first = await consoleAs(svc.url, a.id, 'owner');
  const second = await consoleAs(svc.url, a.id, 'owner');
  // Each demotes the other at the same moment: one wins, the other meets the last owner.
  const [x, y] = await Promise.all([
    first.patch(`/console/api/team/members/${second.user.id}`, { role: 'admin' }),
    second.patch(`/console/api/team/members/${first.user.id}`, { role: 'admin' }),
  ]);
  t.deepEqual([x.status, y.status].sort(), [200, 403], `${x.text} ${y.text}`);
  const refused = [x, y].find((r) => r.status !== 200)!;
  t.is(refused.body.error.code, 'owner_protected', 'the loser is an admin by then: the role is read again under the lock');
  const team = (await first.get('/console/api/team')).body;
  t.is(team.members.filter((m: any) => m.role === 'owner').length, 1);
});

test('removing a member revokes their sessions at once', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const dev = await consoleAs(svc.url, a.id, 'developer');
  const removed = await owner.delete(`/console/api/team/members/${dev.user.id}`);
  t.deepEqual(removed.body, { object: 'console_member_removed', id: dev.user.id });
  t.is((await dev.get('/console/api/session')).status, 401);
  const signIn = await call(svc.url, 'POST', '/console/api/sign_in', { body: { email: dev.user.email, password: CONSOLE_PASSWORD } });
  t.is(signIn.body.error.code, 'invalid_credentials', 'a removed person cannot sign in');
  t.false((await owner.get('/console/api/team')).body.members.some((m: any) => m.id === dev.user.id));
  t.is((await owner.delete(`/console/api/team/members/${dev.user.id}`)).body.error.code, 'console_member_not_found');
});

test("another account's member, invitation and session ids answer 404 like unknown ones", async (t) => {
  const mine = await makeAccount(svc.url);
  const theirs = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, mine.id, 'owner');
  const theirOwner = await consoleAs(svc.url, theirs.id, 'owner');
  const theirDev = await consoleAs(svc.url, theirs.id, 'developer');
  const theirInvitation = (await theirOwner.post('/console/api/team/invitations', { email: 'pending@theirs.example', role: 'viewer' })).body;
  const theirSession = (await theirDev.get('/console/api/sessions')).body.data[0].id;
  const unknown = '00000000-0000-4000-8000-000000000000';

  for (const id of [theirDev.user.id, theirOwner.user.id, unknown, 'junk']) {
    for (const r of [
      await owner.patch(`/console/api/team/members/${id}`, { role: 'viewer' }),
      await owner.delete(`/console/api/team/members/${id}`),
      await owner.post(`/console/api/team/members/${id}/password_reset`),
    ]) {
      t.is(r.status, 404, `${id}: ${r.text}`);
      t.is(r.body.error.code, 'console_member_not_found');
    }
  }
  for (const id of [theirInvitation.id, unknown, 'junk']) {
    const r = await owner.delete(`/console/api/team/invitations/${id}`);
    t.is(r.status, 404);
    t.is(r.body.error.code, 'console_invitation_not_found');
  }
  const s = await owner.delete(`/console/api/sessions/${theirSession}`);
  t.is(s.status, 404);
  t.is(s.body.error.code, 'console_session_not_found');

  const theirs2 = await theirOwner.get('/console/api/team');
  t.is(theirs2.body.members.length, 2, 'nothing of theirs changed');
  t.is(theirs2.body.invitations.length, 1);
  t.is((await theirDev.get('/console/api/session')).status, 200);
  t.false((await owner.get('/console/api/team')).body.members.some((m: any) => m.email === theirDev.user.email));
});

test('the operator creates an account with its owner’s email: the answer carries the owner’s invitation, and the owner opens it', async (t) => {
  const admin = adminClient(svc.url);
  const created = await admin.post('/admin/v1/accounts', { name: 'Reseller Co', country: 'US', owner_email: 'Founder@Reseller.example' });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'account', name: 'Reseller Co' });
  t.true(created.body.owner_invitation.url.startsWith(`${svc.url}/console/accept?token=sbi_`));
  t.truthy(Date.parse(created.body.owner_invitation.expires_at));

  const token = tokenOf(created.body.owner_invitation.url);
  const peek = await call(svc.url, 'GET', `/console/api/invitations/${token}`);
  t.like(peek.body, { email: 'founder@reseller.example', role: 'owner', account_name: 'Reseller Co' });
  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Founder', password: CONSOLE_PASSWORD } });
  t.is(accepted.status, 200);
  t.truthy(sessionCookieOf(accepted));
  t.like(accepted.body, { user: { role: 'owner' }, account: { id: created.body.id } });

  const plain = await admin.post('/admin/v1/accounts', { name: 'No Owner Yet', country: 'US' });
  t.is(plain.status, 201);
  t.is(plain.body.owner_invitation, undefined);

  // An address that already signs in: refused before any account is made.
  const taken = await admin.post('/admin/v1/accounts', { name: 'Twice', country: 'US', owner_email: 'founder@reseller.example' });
  t.is(taken.status, 409);
  t.is(taken.body.error.code, 'email_taken');
  // Other tests of this file create accounts at the same time: look for this one by name, not by count.
  t.false((await admin.get('/admin/v1/accounts?limit=200')).body.data.some((a: { name: string }) => a.name === 'Twice'), 'no account was made');
  t.is((await admin.post('/admin/v1/accounts', { name: 'Bad', country: 'US', owner_email: 'not-an-address' })).status, 400);
});

test('`switchboard admin create-account --owner-email` prints the owner’s invitation link', async (t) => {
  const out = await adminCli(svc.url, ['create-account', '--name', 'CLI Reseller', '--country', 'US', '--owner-email', 'cli-owner@reseller.example']);
  t.is(out.code, 0, JSON.stringify(out.err));
  t.like(out.out, { object: 'account', name: 'CLI Reseller' });
  t.regex(out.out.owner_invitation.url, /\/console\/accept\?token=sbi_/);
});
