/**
 * The Microsoft Graph SDK client on the configured Graph origin (MICROSOFT_GRAPH_URL: Graph's, a
 * national cloud's, or the fake's in tests). Its middleware chain is ours, as the SDK allows:
 * a bearer token on every request (the SDK's own handler adds it only on https Graph hosts it
 * knows), then the SDK's HTTP handler. No retry handler: a failure answers at once and the caller
 * decides (CalendarUnavailable is retried by the jobs, a booking on a call cannot wait).
 */
import { Client, HTTPMessageHandler, type Context, type Middleware } from '@microsoft/microsoft-graph-client';
import type { CalendarsConfig } from '../../runtime/config.ts';

export const GRAPH_VERSION = 'v1.0';

class BearerToken implements Middleware {
  private next: Middleware | undefined;
  constructor(private readonly token: () => Promise<string>) {}
  async execute(context: Context): Promise<void> {
    const headers = new Headers(context.options?.headers as HeadersInit | undefined);
    headers.set('authorization', `Bearer ${await this.token()}`);
    context.options = { ...context.options, headers };
    await this.next!.execute(context);
  }
  setNext(next: Middleware): void {
    this.next = next;
  }
}

export function graphClient(settings: NonNullable<CalendarsConfig['microsoft']>, accessToken: () => Promise<string>): Client {
  return Client.initWithMiddleware({
    middleware: [new BearerToken(accessToken), new HTTPMessageHandler()],
    baseUrl: `${settings.graphUrl}/`,
    defaultVersion: GRAPH_VERSION,
  });
}

/** A link Graph gave (@odata.nextLink, @odata.deltaLink) as the path the client takes (it parses only https links itself). */
export function graphPath(settings: NonNullable<CalendarsConfig['microsoft']>, link: string): string | null {
  const base = `${settings.graphUrl}/${GRAPH_VERSION}/`;
  return link.startsWith(base) ? `/${link.slice(base.length)}` : null;
}
