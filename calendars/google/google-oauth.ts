/**
 * Google's OAuth 2.0 for web server applications, through the official client
 * (`auth.OAuth2` of @googleapis/calendar, google-auth-library): the consent URL, the code
 * exchange, and the OAuth2 client an adapter uses (it refreshes the access token itself).
 * https://developers.google.com/identity/protocols/oauth2/web-server
 */
import { auth } from '@googleapis/calendar';
import type { CalendarsConfig } from '../../runtime/config.ts';
import type { CalendarCredentials } from '../calendar.ts';
import { failureForTokenError } from '../failures.ts';

export type GoogleSettings = NonNullable<CalendarsConfig['google']>;
export type GoogleCredentials = Extract<CalendarCredentials, { kind: 'google' }>;

export const GOOGLE_SCOPES = [
  'https://www.googleapis.com/auth/calendar.events',
  'https://www.googleapis.com/auth/calendar.freebusy',
  'openid',
  'email',
];

export function googleOAuthClient(settings: GoogleSettings, redirectUri?: string) {
  return new auth.OAuth2({
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    redirectUri,
    endpoints: { oauth2AuthBaseUrl: settings.authUrl, oauth2TokenUrl: settings.tokenUrl },
  });
}

/** The `email` claim of an ID token received straight from the token endpoint over TLS (OpenID Connect Core §3.1.3.7 lets the signature go unchecked then). */
function emailOf(idToken: string | null | undefined): string | null {
  const payload = idToken?.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { email?: unknown };
    return typeof claims.email === 'string' ? claims.email : null;
  } catch {
    return null;
  }
}

/** The status and OAuth `error` of a failed token request (gaxios puts the answer on `response`). */
export function tokenFailure(err: unknown): Error {
  const response = (err as { response?: { status?: number; data?: { error?: unknown } } }).response;
  const error = response?.data?.error;
  return failureForTokenError(response?.status, typeof error === 'string' ? error : undefined);
}

export function googleOAuth(settings: GoogleSettings) {
  return {
    kind: 'google' as const,
    authorizationUrl(p: { state: string; redirectUri: string }): string {
      return googleOAuthClient(settings, p.redirectUri).generateAuthUrl({
        access_type: 'offline',
        prompt: 'consent',
        scope: GOOGLE_SCOPES,
        state: p.state,
      });
    },
    async exchange(p: { code: string; redirectUri: string }): Promise<CalendarCredentials> {
      let tokens;
      try {
        ({ tokens } = await googleOAuthClient(settings, p.redirectUri).getToken({ code: p.code, redirect_uri: p.redirectUri }));
      } catch (err) {
        throw tokenFailure(err);
      }
      if (!tokens.access_token || !tokens.refresh_token) throw failureForTokenError(undefined, 'invalid_grant');
      return {
        kind: 'google',
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: new Date(tokens.expiry_date ?? Date.now() + 3600_000).toISOString(),
        calendarId: 'primary',
        email: emailOf(tokens.id_token),
      };
    },
  };
}
