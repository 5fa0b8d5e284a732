import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { SESSION_KEY, useSession } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { CopyField } from '../ui/Copy.tsx';
import { QrCode } from '../ui/QrCode.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import { ErrorNote, Loading, Notice, PageHeader, Section } from '../ui/Page.tsx';
import { DataTable } from '../ui/Table.tsx';
import { rowsOf, useInvalidate } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { List, SessionRow, TwoFactorSetup } from '../types.ts';

/** Your own security: two-factor sign-in and the sessions signed in as you. */
export default function Security() {
  const { user, account } = useSession();
  return (
    <>
      <PageHeader title="Your security" description={`Signed in as ${user.email}.`} />
      {account.require_two_factor && !user.two_factor_enabled && (
        <Notice tone="warn">Your team requires two-factor sign-in. Turn it on below to use the rest of the console.</Notice>
      )}
      <TwoFactor />
      {/* Until then the server answers nothing else (403 two_factor_setup_required). */}
      {!(account.require_two_factor && !user.two_factor_enabled) && (
        <>
          <ChangePassword />
          <Sessions />
        </>
      )}
    </>
  );
}

function TwoFactor() {
  const { user } = useSession();
  const invalidate = useInvalidate();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const setup = useMutation({ mutationFn: () => api.post<TwoFactorSetup>('/two_factor/setup') });
  const enable = useMutation({
    mutationFn: () => api.post('/two_factor/enable', { code: code.replace(/\s/g, '') }),
    onSuccess: () => {
      setCode('');
      setup.reset();
      void invalidate(SESSION_KEY[0]);
    },
  });
  const disable = useMutation({
    mutationFn: () => api.post('/two_factor/disable', { code: code.replace(/\s/g, ''), password }),
    onSuccess: () => {
      setCode('');
      setPassword('');
      void invalidate(SESSION_KEY[0]);
    },
  });
  return (
    <Section title="Two-factor sign-in" id="two-factor">
      <p>
        Status: {user.two_factor_enabled ? <Badge tone="good">On</Badge> : <Badge tone="neutral">Off</Badge>}
      </p>
      {user.two_factor_enabled ? (
        <Form onSubmit={() => disable.mutate()}>
          <p className="muted">To turn two-factor sign-in off, enter a current code and your password.</p>
          <Field label="Current code" name="code" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} />
          <Field label="Password" type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          <FormError error={disable.error} />
          <Submit pending={disable.isPending} variant="danger">
            Turn off two-factor
          </Submit>
        </Form>
      ) : !setup.data ? (
        <>
          <p>Two-factor sign-in asks for a code from an authenticator app (any app that takes a TOTP key) after your password.</p>
          <FormError error={setup.error} />
          <button type="button" className="button button-primary" disabled={setup.isPending} onClick={() => setup.mutate()}>
            Set up two-factor
          </button>
        </>
      ) : (
        <>
          <ol>
            <li>
              Scan this code with your authenticator app, or add an account in it with the key (or open the setup address on the phone that has the app):
              <QrCode text={setup.data.otpauth_url} label="QR code of the two-factor setup address" />
              <CopyField label="Key" value={setup.data.secret} />
              <CopyField label="Setup address" value={setup.data.otpauth_url} />
            </li>
            <li>Enter the 6-digit code the app then shows.</li>
          </ol>
          <Form onSubmit={() => enable.mutate()}>
            <Field label="Code from the app" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,8}" required value={code} onChange={(e) => setCode(e.target.value)} />
            <FormError error={enable.error} />
            <Submit pending={enable.isPending}>Turn on two-factor</Submit>
          </Form>
        </>
      )}
    </Section>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({
    mutationFn: () => api.post<{ revoked_sessions: number }>('/password', { current_password: current, new_password: next }),
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
  });
  return (
    <Section title="Password" id="password">
      <Form onSubmit={() => change.mutate()}>
        <Field label="Current password" type="password" name="current_password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        <Field label="New password" hint="At least 12 characters." type="password" name="new_password" autoComplete="new-password" minLength={12} required value={next} onChange={(e) => setNext(e.target.value)} />
        <FormError error={change.error} />
        {change.isSuccess && <Notice tone="good">Password changed. Your other sessions are signed out.</Notice>}
        <Submit pending={change.isPending}>Change password</Submit>
      </Form>
    </Section>
  );
}

function Sessions() {
  const invalidate = useInvalidate();
  const sessions = useQuery({ queryKey: ['/sessions'], queryFn: () => api.get<List<SessionRow>>('/sessions', { scope: 'mine', limit: 50 }) });
  const revoke = useMutation({ mutationFn: (id: string) => api.del(`/sessions/${id}`), onSuccess: () => invalidate('/sessions') });
  return (
    <Section title="Where you are signed in" id="sessions">
      <ErrorNote error={revoke.error} />
      {sessions.error ? (
        <ErrorNote error={sessions.error} />
      ) : !sessions.data ? (
        <Loading />
      ) : (
        <DataTable
          caption="Your sessions"
          rowKey={(s) => s.id}
          rows={rowsOf(sessions.data)}
          columns={[
            { header: 'Browser', cell: (s) => <span className="muted">{s.user_agent ?? 'Unknown browser'}</span> },
            { header: 'Address', cell: (s) => s.ip ?? '—' },
            { header: 'Signed in', cell: (s) => dateTime(s.created_at) },
            { header: 'Last seen', cell: (s) => dateTime(s.last_seen_at) },
            {
              header: 'Action',
              cell: (s) =>
                s.current ? (
                  <Badge tone="good">This browser</Badge>
                ) : (
                  <button type="button" className="button button-small button-danger" onClick={() => revoke.mutate(s.id)}>
                    Sign out
                  </button>
                ),
            },
          ]}
        />
      )}
    </Section>
  );
}
