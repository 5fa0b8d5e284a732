/**
 * The console's only way to the server: fetch with the session cookie (same origin), the CSRF
 * token of GET /console/api/session on every write, and errors as words (`error.message`).
 */

export const API = '/console/api';

/** An answer in the error shape `{ error: { type, code, message, request_id } }`, or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

let csrfToken: string | null = null;
/** Set from every GET /session answer (the session provider), used by every write. */
export function rememberCsrf(token: string | null): void {
  csrfToken = token;
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The URL of a console route, for links the browser follows itself (CSV, recordings). */
export function apiUrl(path: string, query?: Query): string {
  return `${API}${path}${queryString(query)}`;
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; request_id?: string } } | null = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  const retry = Number(res.headers.get('retry-after'));
  const e = body?.error;
  return new ApiError(
    res.status,
    e?.code ?? 'http_error',
    e?.message ?? `The server answered ${res.status} ${res.statusText}.`,
    e?.request_id ?? null,
    Number.isFinite(retry) && retry > 0 ? retry : null,
  );
}

async function fetchCsrf(): Promise<string | null> {
  const res = await fetch(`${API}/session`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!res.ok) return null;
  const body = (await res.json()) as { csrf_token?: string };
  csrfToken = body.csrf_token ?? null;
  return csrfToken;
}

/** Writes made before there is a session (they take no CSRF token). */
const SIGNED_OUT_WRITES = new Set(['/sign_in', '/invitations/accept', '/password_resets', '/password_resets/complete']);

async function send(method: string, path: string, body: unknown, query: Query | undefined, retried: boolean): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && !SIGNED_OUT_WRITES.has(path)) {
    const token = csrfToken ?? (await fetchCsrf());
    if (token) headers['x-csrf-token'] = token;
  }
  let res: Response;
  try {
    res = await fetch(`${API}${path}${queryString(query)}`, {
      method,
      credentials: 'same-origin',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
  // A token from an older session (signed in again in another tab): fetch the current one once.
  if (res.status === 403 && !retried && method !== 'GET') {
    const copy = res.clone();
    const err = await errorOf(copy);
    if (err.code === 'csrf_failed') {
      csrfToken = null;
      return send(method, path, body, query, true);
    }
  }
  return res;
}

async function json<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  const res = await send(method, path, body, query, false);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => json<T>('GET', path, undefined, query),
  post: <T>(path: string, body: unknown = {}, query?: Query) => json<T>('POST', path, body, query),
  put: <T>(path: string, body: unknown) => json<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => json<T>('PATCH', path, body),
  del: <T>(path: string, query?: Query) => json<T>('DELETE', path, undefined, query),
};

/** Words for any error a query or mutation threw. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return 'Something went wrong.';
}
