/**
 * The Microsoft Graph SDK client on the configured Graph origin. The SDK adds the bearer token only
 * for hosts it knows as Graph's, so a configured origin (a national cloud, or the fake in tests)
 * is declared as a custom host.
 */
import { Client } from '@microsoft/microsoft-graph-client';
import type { CalendarsConfig } from '../../runtime/config.ts';

export function graphClient(settings: NonNullable<CalendarsConfig['microsoft']>, accessToken: () => Promise<string>): Client {
  return Client.initWithMiddleware({
    authProvider: { getAccessToken: accessToken },
    baseUrl: `${settings.graphUrl}/`,
    defaultVersion: 'v1.0',
    customHosts: new Set([new URL(settings.graphUrl).host]),
  });
}
