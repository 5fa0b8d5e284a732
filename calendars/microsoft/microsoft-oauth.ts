/**
 * The Microsoft identity platform's authorization code flow (v2.0 endpoints on
 * login.microsoftonline.com): the consent URL, the code exchange and the refresh token grant.
 * The Graph SDK takes a token and does not obtain one, so the two form posts are here.
 * https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow
 */
import type { CalendarsConfig } from '../../runtime/config.ts';
import type { CalendarCredentials } from '../calendar.ts';
import { failureForTokenError } from '../failures.ts';
import { graphClient } from './graph-client.ts';

export type MicrosoftSettings = NonNullable<CalendarsConfig['microsoft']>;
export type MicrosoftCredentials = Extract<CalendarCredentials, { kind: 'microsoft' }>;

export const MICROSOFT_SCOPES = 'offline_access Calendars.ReadWrite User.Read';

const endpoint = (s: MicrosoftSettings, path: 'authorize' | 'token') => `${s.loginUrl}/${encodeURIComponent(s.tenant)}/oauth2/v2.0/${path}`;

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
}

/** POSTs a grant to the token endpoint; `invalid_grant` (revoked, expired, password changed) → CalendarAuthError. */
export async function microsoftToken(settings: MicrosoftSettings, grant: Record<string, string>): Promise<TokenAnswer> {
  let res: Response;
  try {
    res = await fetch(endpoint(settings, 'token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: settings.clientId, client_secret: settings.clientSecret, scope: MICROSOFT_SCOPES, ...grant }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    throw failureForTokenError(undefined, undefined);
  }
  const body = (await res.json().catch(() => ({}))) as Partial<TokenAnswer> & { error?: string };
  if (!res.ok || typeof body.access_token !== 'string') throw failureForTokenError(res.status, body.error);
  return body as TokenAnswer;
}

/** New credentials from a refresh token; Microsoft may rotate the refresh token (the old one then stays valid a while). */
export async function refreshMicrosoft(settings: MicrosoftSettings, credentials: MicrosoftCredentials, now = Date.now()): Promise<MicrosoftCredentials> {
  const answer = await microsoftToken(settings, { grant_type: 'refresh_token', refresh_token: credentials.refreshToken });
  return {
    ...credentials,
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token ?? credentials.refreshToken,
    expiresAt: new Date(now + answer.expires_in * 1000).toISOString(),
  };
}

export function microsoftOAuth(settings: MicrosoftSettings) {
  return {
    kind: 'microsoft' as const,
    authorizationUrl(p: { state: string; redirectUri: string }): string {
      const url = new URL(endpoint(settings, 'authorize'));
      url.search = new URLSearchParams({
        client_id: settings.clientId,
        response_type: 'code',
        redirect_uri: p.redirectUri,
        response_mode: 'query',
        scope: MICROSOFT_SCOPES,
        state: p.state,
        prompt: 'select_account',
      }).toString();
      return url.toString();
    },
    async exchange(p: { code: string; redirectUri: string }): Promise<CalendarCredentials> {
      const answer = await microsoftToken(settings, { grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri });
      if (!answer.refresh_token) throw failureForTokenError(undefined, 'invalid_grant');
      // The account's address labels the connection; a failure here is not worth refusing the connection for.
      const me = (await graphClient(settings, async () => answer.access_token)
        .api('/me')
        .select('mail,userPrincipalName')
        .get()
        .catch(() => null)) as { mail?: string | null; userPrincipalName?: string | null } | null;
      return {
        kind: 'microsoft',
        accessToken: answer.access_token,
        refreshToken: answer.refresh_token,
        expiresAt: new Date(Date.now() + answer.expires_in * 1000).toISOString(),
        calendarId: null,
        email: me?.mail ?? me?.userPrincipalName ?? null,
      };
    },
  };
}
