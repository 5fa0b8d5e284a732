import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { PublicCard } from '../app/PublicCard.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import { Notice } from '../ui/Page.tsx';

/** /console/reset: ask for a reset link; /console/reset?token=…: choose a new password. */
export default function Reset() {
  const [params] = useSearchParams();
  const token = params.get('token');
  return token ? <Complete token={token} /> : <Request />;
}

function Request() {
  const [email, setEmail] = useState('');
  const request = useMutation({ mutationFn: () => api.post('/password_resets', { email }) });
  return (
    <PublicCard title="Reset your password">
      {request.isSuccess ? (
        <Notice tone="good">
          If <strong>{email}</strong> belongs to someone on a team, a reset link is on its way to it. An owner or admin of your team can also give you
          a reset link from the Team page.
        </Notice>
      ) : (
        <Form onSubmit={() => request.mutate()}>
          <Field label="Email" type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <FormError error={request.error} />
          <Submit pending={request.isPending}>Send a reset link</Submit>
        </Form>
      )}
      <p className="muted">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </PublicCard>
  );
}

function Complete({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const complete = useMutation({ mutationFn: () => api.post('/password_resets/complete', { token, password }) });
  const mismatch = confirm !== '' && confirm !== password ? 'The two passwords differ.' : null;
  return (
    <PublicCard title="Choose a new password">
      {complete.isSuccess ? (
        <>
          <Notice tone="good">Your password is changed, and every session that was signed in with the old one is signed out.</Notice>
          <p>
            <Link to="/sign-in" className="button button-primary">
              Sign in
            </Link>
          </p>
        </>
      ) : (
        <Form
          onSubmit={() => {
            if (!mismatch) complete.mutate();
          }}
        >
          <Field label="New password" hint="At least 12 characters." type="password" name="password" autoComplete="new-password" minLength={12} required value={password} onChange={(e) => setPassword(e.target.value)} />
          <Field label="Repeat the new password" type="password" name="confirm" autoComplete="new-password" required value={confirm} error={mismatch} onChange={(e) => setConfirm(e.target.value)} />
          <FormError error={complete.error} />
          <Submit pending={complete.isPending}>Change password</Submit>
        </Form>
      )}
    </PublicCard>
  );
}
