import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, rememberCsrf } from '../api.ts';
import { SESSION_KEY } from '../app/session.tsx';
import { PublicCard } from '../app/PublicCard.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import { ErrorNote, Loading } from '../ui/Page.tsx';
import { dateTime, words } from '../ui/format.ts';
import type { ConsoleSession } from '../types.ts';

interface InvitationInfo {
  email: string;
  account_name: string;
  role: string;
  expires_at: string;
}

/** /console/accept?token=…: a person invited to a team sets a name and password. */
export default function Accept() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const invitation = useQuery({
    queryKey: ['/invitations', token],
    queryFn: () => api.get<InvitationInfo>(`/invitations/${encodeURIComponent(token)}`),
    enabled: token !== '',
  });
  const accept = useMutation({
    mutationFn: () => api.post<ConsoleSession>('/invitations/accept', { token, name, password }),
    onSuccess: (session) => {
      rememberCsrf(session.csrf_token);
      queryClient.setQueryData(SESSION_KEY, session);
      navigate('/', { replace: true });
    },
  });
  if (!token) {
    return (
      <PublicCard title="Accept an invitation">
        <p>This address has no invitation in it. Open the link from your invitation again, in full.</p>
      </PublicCard>
    );
  }
  const mismatch = confirm !== '' && confirm !== password ? 'The two passwords differ.' : null;
  return (
    <PublicCard title="Join your team">
      {invitation.isPending && <Loading what="Checking the invitation" />}
      {invitation.error && (
        <>
          <ErrorNote error={invitation.error} />
          <p>Ask whoever invited you for a new invitation. Already have an account? <Link to="/sign-in">Sign in</Link>.</p>
        </>
      )}
      {invitation.data && (
        <>
          <p>
            You are invited to <strong>{invitation.data.account_name}</strong> as <strong>{words(invitation.data.role)}</strong>, with the email{' '}
            <strong>{invitation.data.email}</strong>. The invitation is valid until {dateTime(invitation.data.expires_at)}.
          </p>
          <Form
            onSubmit={() => {
              if (!mismatch) accept.mutate();
            }}
          >
            <Field label="Your name" name="name" autoComplete="name" required value={name} onChange={(e) => setName(e.target.value)} />
            <Field
              label="Choose a password"
              hint="At least 12 characters. A passphrase of a few words is easiest to remember."
              type="password"
              name="password"
              autoComplete="new-password"
              minLength={12}
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
            <Field label="Repeat the password" type="password" name="confirm" autoComplete="new-password" required value={confirm} error={mismatch} onChange={(e) => setConfirm(e.target.value)} />
            <FormError error={accept.error} />
            <Submit pending={accept.isPending}>Set password and continue</Submit>
          </Form>
        </>
      )}
    </PublicCard>
  );
}
