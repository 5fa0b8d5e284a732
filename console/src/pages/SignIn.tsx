import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, rememberCsrf } from '../api.ts';
import { SESSION_KEY } from '../app/session.tsx';
import { PublicCard } from '../app/PublicCard.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import type { ConsoleSession } from '../types.ts';

/** Only paths inside the console are followed after signing in. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function SignIn() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const signIn = useMutation({
    mutationFn: () => api.post<ConsoleSession>('/sign_in', { email, password, ...(needsCode ? { code } : {}) }),
    onSuccess: (session) => {
      rememberCsrf(session.csrf_token);
      queryClient.setQueryData(SESSION_KEY, session);
      navigate(safeNext(params.get('next')), { replace: true });
    },
    onError: (err) => {
      if (err instanceof ApiError && err.code === 'two_factor_code_required') setNeedsCode(true);
    },
  });
  const codeAsked = signIn.error instanceof ApiError && signIn.error.code === 'two_factor_code_required';
  return (
    <PublicCard title={needsCode ? 'Enter your two-factor code' : 'Sign in'}>
      <Form onSubmit={() => signIn.mutate()}>
        {!needsCode ? (
          <>
            <Field label="Email" type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
            <Field label="Password" type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </>
        ) : (
          <Field
            label="Two-factor code"
            hint="The 6-digit code your authenticator app shows for this console."
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9 ]{6,8}"
            required
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        )}
        {!codeAsked && <FormError error={signIn.error} />}
        <Submit pending={signIn.isPending}>{needsCode ? 'Verify and sign in' : 'Sign in'}</Submit>
      </Form>
      <p className="muted">
        <Link to="/reset">Forgot your password?</Link>
      </p>
    </PublicCard>
  );
}
