import crypto from 'node:crypto';
import { call, type Reply, type RequestOptions } from './http.ts';
import { adminClient } from './factories.ts';

/** The console's own password for people the tests create (at least 12 characters). */
export const CONSOLE_PASSWORD = 'correct horse battery staple';

export interface ConsoleClient {
  get: <T = any>(path: string, opts?: RequestOptions) => Promise<Reply<T>>;
  post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => Promise<Reply<T>>;
  patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => Promise<Reply<T>>;
  put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => Promise<Reply<T>>;
  delete: <T = any>(path: string, opts?: RequestOptions) => Promise<Reply<T>>;
  /** The `sb_console=…` cookie pair the client sends. */
  cookie: string;
  csrf: string;
  user: { id: string; email: string; role: string };
}

/** The `name=value` pair of the session cookie a reply set, or null. */
export function sessionCookieOf(reply: Reply): string | null {
  const set = reply.headers.getSetCookie().find((c) => c.startsWith('sb_console='));
  return set ? set.split(';')[0]! : null;
}

/** A console client bound to a session cookie and its CSRF token (sent on every request other than GET). */
export function consoleClientOf(baseUrl: string, cookie: string, csrf: string, user: ConsoleClient['user']): ConsoleClient {
  const go = <T = any>(method: string, path: string, opts: RequestOptions = {}) =>
    call<T>(baseUrl, method, path, { ...opts, headers: { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }), ...opts.headers } });
  return {
    get: (path, opts) => go('GET', path, opts),
    post: (path, body, opts) => go('POST', path, { body, ...opts }),
    patch: (path, body, opts) => go('PATCH', path, { body, ...opts }),
    put: (path, body, opts) => go('PUT', path, { body, ...opts }),
    delete: (path, opts) => go('DELETE', path, opts),
    cookie,
    csrf,
    user,
  };
}

/**
 * A person of `accountId` with `role`, signed in to the console: the operator invites them
 * (POST /admin/v1/accounts/:id/invitations) and they accept the link with a password.
 */
export async function consoleAs(baseUrl: string, accountId: string, role = 'owner', email = `${role}-${crypto.randomBytes(4).toString('hex')}@agency.example`): Promise<ConsoleClient> {
  const invited = await adminClient(baseUrl).post(`/admin/v1/accounts/${accountId}/invitations`, { email, role });
  if (invited.status !== 201) throw new Error(`invitation failed: ${invited.status} ${invited.text}`);
  const token = new URL(invited.body.url).searchParams.get('token')!;
  const accepted = await call(baseUrl, 'POST', '/console/api/invitations/accept', { body: { token, name: `The ${role}`, password: CONSOLE_PASSWORD } });
  const cookie = sessionCookieOf(accepted);
  if (accepted.status !== 200 || !cookie) throw new Error(`accepting the invitation failed: ${accepted.status} ${accepted.text}`);
  return consoleClientOf(baseUrl, cookie, accepted.body.csrf_token, { id: accepted.body.user.id, email, role });
}
