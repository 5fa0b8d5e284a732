import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Switch } from 'react-aria-components';
import { api } from '../api.ts';
import { SESSION_KEY, useCan, useSession } from '../app/session.tsx';
import { ROLES, type Role } from '../permissions.ts';
import { Badge } from '../ui/Badge.tsx';
import { CopyField } from '../ui/Copy.tsx';
import { Form, Field, FormError, Select, Submit } from '../ui/Form.tsx';
import { Empty, ErrorNote, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { DataTable, Pager, useCursorList } from '../ui/Table.tsx';
import { useInvalidate } from '../ui/data.ts';
import { dateTime, words } from '../ui/format.ts';
import type { ConsoleInvitation as Invitation, PasswordResetLink, SessionRow, Team as TeamData } from '../types.ts';

export default function Team() {
  const canWrite = useCan('team:write');
  const team = useQuery({ queryKey: ['/team'], queryFn: () => api.get<TeamData>('/team') });
  return (
    <>
      <PageHeader title="Team" description="The people who use this console, their roles and their two-factor sign-in." />
      <QueryState query={team}>
        {(t) => (
          <>
            {canWrite && <RequireTwoFactor />}
            <Members team={t} />
            <Invitations invitations={t.invitations} />
            {canWrite && <Invite />}
            {canWrite && <TeamSessions />}
            <Section title="What each role may do" id="roles">
              <dl className="facts">
                {ROLES.map((r) => (
                  <div className="fact" key={r.role}>
                    <dt>{r.label}</dt>
                    <dd>{r.does}</dd>
                  </div>
                ))}
              </dl>
            </Section>
          </>
        )}
      </QueryState>
    </>
  );
}

function RequireTwoFactor() {
  const { account } = useSession();
  const invalidate = useInvalidate();
  const change = useMutation({
    mutationFn: (require_two_factor: boolean) => api.patch('/security', { require_two_factor }),
    onSuccess: () => invalidate(SESSION_KEY[0], '/team'),
  });
  return (
    <Section title="Two-factor for everyone" id="require-two-factor">
      <Switch className="mode-switch" isSelected={account.require_two_factor} isDisabled={change.isPending} onChange={(v) => change.mutate(v)}>
        <div className="mode-switch-track" aria-hidden="true">
          <span className="mode-switch-thumb" />
        </div>
        <span className="mode-switch-label">Require two-factor sign-in for every member</span>
      </Switch>
      <p className="muted">Members without it can only set it up until they have turned it on.</p>
      <ErrorNote error={change.error} />
    </Section>
  );
}

function Members({ team }: { team: TeamData }) {
  const { user } = useSession();
  const canWrite = useCan('team:write');
  const invalidate = useInvalidate();
  const [resetLink, setResetLink] = useState<{ email: string; url: string } | null>(null);
  const setRole = useMutation({ mutationFn: ({ id, role }: { id: string; role: Role }) => api.patch(`/team/members/${id}`, { role }), onSuccess: () => invalidate('/team') });
  const remove = useMutation({ mutationFn: (id: string) => api.del(`/team/members/${id}`), onSuccess: () => invalidate('/team') });
  const reset = useMutation({
    mutationFn: (m: { id: string; email: string }) => api.post<PasswordResetLink>(`/team/members/${m.id}/password_reset`).then((r) => ({ email: m.email, url: r.url })),
    onSuccess: setResetLink,
  });
  const assignable = ROLES.filter((r) => user.role === 'owner' || r.role !== 'owner');
  return (
    <Section title="Members" id="members">
      <ErrorNote error={setRole.error ?? remove.error ?? reset.error} />
      {resetLink && (
        <Notice tone="info">
          A password reset link for {resetLink.email} (give it to them; it works once):
          <CopyField label="Reset link" value={resetLink.url} />
        </Notice>
      )}
      <DataTable
        caption="Members"
        rowKey={(m) => m.id}
        rows={team.members}
        columns={[
          { header: 'Name', cell: (m) => m.name ?? '—' },
          { header: 'Email', cell: (m) => m.email },
          {
            header: 'Role',
            cell: (m) =>
              canWrite && m.id !== user.id && (user.role === 'owner' || m.role !== 'owner') ? (
                <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => setRole.mutate({ id: m.id, role: e.target.value as Role })}>
                  {assignable.map((r) => (
                    <option key={r.role} value={r.role}>
                      {r.label}
                    </option>
                  ))}
                </select>
              ) : (
                words(m.role)
              ),
          },
          { header: 'Two-factor', cell: (m) => (m.two_factor_enabled ? <Badge tone="good">On</Badge> : <Badge tone="neutral">Off</Badge>) },
          { header: 'Last sign-in', cell: (m) => dateTime(m.last_sign_in_at) },
          {
            header: 'Actions',
            cell: (m) =>
              canWrite && m.id !== user.id && (user.role === 'owner' || m.role !== 'owner') ? (
                <span className="page-actions">
                  <button type="button" className="button button-small" onClick={() => reset.mutate(m)}>
                    Reset link
                  </button>
                  <button type="button" className="button button-small button-danger" onClick={() => window.confirm(`Remove ${m.email} from the team?`) && remove.mutate(m.id)}>
                    Remove
                  </button>
                </span>
              ) : m.id === user.id ? (
                <span className="muted">You</span>
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

function Invitations({ invitations }: { invitations: Invitation[] }) {
  const canWrite = useCan('team:write');
  const invalidate = useInvalidate();
  const revoke = useMutation({ mutationFn: (id: string) => api.del(`/team/invitations/${id}`), onSuccess: () => invalidate('/team') });
  return (
    <Section title="Invitations waiting" id="invitations">
      <ErrorNote error={revoke.error} />
      {invitations.length === 0 ? (
        <Empty title="No invitation is waiting" />
      ) : (
        <DataTable
          caption="Invitations"
          rowKey={(i) => i.id}
          rows={invitations}
          columns={[
            { header: 'Email', cell: (i) => i.email },
            { header: 'Role', cell: (i) => words(i.role) },
            { header: 'Valid until', cell: (i) => dateTime(i.expires_at) },
            {
              header: 'Action',
              cell: (i) =>
                canWrite ? (
                  <button type="button" className="button button-small button-danger" onClick={() => revoke.mutate(i.id)}>
                    Withdraw
                  </button>
                ) : null,
            },
          ]}
        />
      )}
    </Section>
  );
}

function Invite() {
  const { user } = useSession();
  const invalidate = useInvalidate();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const invite = useMutation({
    mutationFn: () => api.post<Invitation>('/team/invitations', { email, role }),
    onSuccess: () => {
      setEmail('');
      void invalidate('/team');
    },
  });
  return (
    <Section title="Invite someone" id="invite">
      <Form onSubmit={() => invite.mutate()}>
        <div className="form-row">
          <Field label="Email" type="email" name="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <Select
            label="Role"
            name="role"
            value={role}
            onChange={(e) => setRole(e.target.value as Role)}
            options={ROLES.filter((r) => user.role === 'owner' || r.role !== 'owner').map((r) => ({ value: r.role, label: r.label }))}
          />
        </div>
        <FormError error={invite.error} />
        <Submit pending={invite.isPending}>Create invitation</Submit>
      </Form>
      {invite.data?.url && (
        <Notice tone="info">
          Send this link to {invite.data.email}; it lets them set a password and join as {words(invite.data.role)}:
          <CopyField label="Invitation link" value={invite.data.url} />
        </Notice>
      )}
    </Section>
  );
}

/** Every session of the team, for owners and admins to sign someone out. */
function TeamSessions() {
  const invalidate = useInvalidate();
  const sessions = useCursorList<SessionRow>('/sessions', { scope: 'team' });
  const revoke = useMutation({ mutationFn: (id: string) => api.del(`/sessions/${id}`), onSuccess: () => invalidate('/sessions') });
  return (
    <Section title="Who is signed in" id="team-sessions">
      <ErrorNote error={sessions.error ?? revoke.error} />
      {sessions.data && (
        <>
          <DataTable
            caption="Sessions of the team"
            rowKey={(x) => x.id}
            rows={sessions.data.data}
            columns={[
              { header: 'Person', cell: (x) => x.email },
              { header: 'Browser', cell: (x) => <span className="muted">{x.user_agent ?? 'Unknown browser'}</span> },
              { header: 'Last seen', cell: (x) => dateTime(x.last_seen_at) },
              {
                header: 'Action',
                cell: (x) =>
                  x.current ? (
                    <Badge tone="good">You, here</Badge>
                  ) : (
                    <button type="button" className="button button-small button-danger" onClick={() => revoke.mutate(x.id)}>
                      Sign out
                    </button>
                  ),
              },
            ]}
          />
          <Pager {...sessions.pager} />
        </>
      )}
    </Section>
  );
}
