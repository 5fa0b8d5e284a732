import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { roleMay, rolesWith, type ConsolePermission, type ConsoleRole } from '../../actors/account/console-roles.ts';
import { csrfTokenOf, type ConsolePeople } from '../../actors/console/people.ts';
import type { Mode } from '../../runtime/types.ts';

/** Who is asking, on a console route: the person, their account and role, and the session. */
export interface ConsoleSession {
  sessionId: string;
  userId: string;
  accountId: string;
  role: ConsoleRole;
  email: string;
  name: string;
  twoFactorEnabled: boolean;
  account: { id: string; name: string; status: string; mode: string; kyb_status: string; console_require_two_factor: boolean };
  /** The cookie's token: only to derive the CSRF token from (never logged, never stored). */
  token: string;
}

export const SESSION_COOKIE = 'sb_console';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every value a Cookie header gives the cookie `name`, in order. Only the name is matched; a value
 * is opaque. A header may hold the name more than once (a cookie of another path, or one a sibling
 * site planted to shadow the real one): each is tried.
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const value = part.slice(eq + 1).trim();
    if (part.slice(0, eq).trim() === name && value) values.push(value);
  }
  return values;
}

/** The first value of the cookie `name`, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  return cookieValues(header, name)[0] ?? null;
}

/** At most this many values of the session cookie are looked up in one request. */
const MAX_SESSION_COOKIES = 3;

/** The Set-Cookie value of a session: HttpOnly, SameSite=Strict, Path=/console, Secure behind TLS. */
export function sessionCookie(token: string, secure: boolean, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/**
 * A write from another site: an Origin header that is not the service's own origin. A browser
 * sends Origin on every cross-site POST, so this refuses what SameSite=Strict would also keep out,
 * and covers the routes without a session (sign-in, accepting an invitation) that have no CSRF token.
 */
export function crossSiteWrite(request: FastifyRequest, publicOrigin: string): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  return origin !== publicOrigin && origin !== `${request.protocol}://${request.host}`;
}

/**
 * Authenticates a console route: the session of the cookie, the CSRF token on every write, the
 * account's two-factor requirement, then the route's permission. Throws a catalogue error.
 */
export async function authenticateConsole(
  request: FastifyRequest,
  people: ConsolePeople,
  publicOrigin: string,
  need: { permission: ConsolePermission; beforeTwoFactor: boolean; whileSuspended?: boolean },
): Promise<ConsoleSession> {
  if (crossSiteWrite(request, publicOrigin)) throw new ApiError('csrf_failed');
  let token: string | null = null;
  let found: Awaited<ReturnType<ConsolePeople['sessionOf']>> = null;
  for (const candidate of cookieValues(request.headers.cookie, SESSION_COOKIE).slice(0, MAX_SESSION_COOKIES)) {
    found = await people.sessionOf(candidate);
    if (found) {
      token = candidate;
      break;
    }
  }
  if (!token || !found) throw new ApiError('console_session_required');
  if (!SAFE_METHODS.has(request.method)) {
    const sent = request.headers['x-csrf-token'];
    if (typeof sent !== 'string' || !sameBytes(sent, csrfTokenOf(token))) throw new ApiError('csrf_failed');
  }
  const twoFactorEnabled = found.user.totp_enabled_at !== null;
  if (found.account.console_require_two_factor && !twoFactorEnabled && !need.beforeTwoFactor) throw new ApiError('two_factor_setup_required');
  if (!roleMay(found.user.role, need.permission)) {
    throw new ApiError('role_forbidden', `Your role (${found.user.role}) does not allow this; it needs one of: ${rolesWith(need.permission).join(', ')}.`);
  }
  // As the account's API keys are: a suspended account reads, and changes nothing but a person's own security.
  if (found.account.status === 'suspended' && !SAFE_METHODS.has(request.method) && !need.whileSuspended) throw new ApiError('reseller_suspended');
  return {
    sessionId: found.session.id,
    userId: found.user.id,
    accountId: found.account.id,
    role: found.user.role,
    email: found.user.email,
    name: found.user.name,
    twoFactorEnabled,
    account: found.account,
    token,
  };
}

/** The session of a console route (its plugin ran); throws if called elsewhere. */
export function consoleCaller(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw new Error(`route ${request.routeOptions.url} has no console session`);
  return request.consoleSession;
}

/**
 * The mode a console request works in: `mode` of the body, else of the query, else test (the
 * route's schema validates it). A write in live mode before the account has gone live answers 403
 * live_not_enabled, as a live key's would.
 */
export function consoleMode(request: FastifyRequest, opts: { write: boolean }): Mode {
  const body = request.body as { mode?: unknown } | undefined;
  const query = request.query as { mode?: unknown } | undefined;
  const mode = body?.mode ?? query?.mode ?? 'test';
  // For a route that forgot to declare `mode` in its schema.
  if (mode !== 'test' && mode !== 'live') throw new ApiError('invalid_parameter', 'mode must be test or live.');
  if (opts.write) requireLiveFor(request, mode);
  return mode;
}

/** A console write in live mode waits for the account's go-live (403 live_not_enabled). */
export function requireLiveFor(request: FastifyRequest, mode: Mode | undefined): void {
  if (mode === 'live' && consoleCaller(request).account.mode !== 'live') throw new ApiError('live_not_enabled');
}

/** Whether cookies must be Secure: the service is reached over https. */
export function secureCookies(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

export type { FastifyReply };
