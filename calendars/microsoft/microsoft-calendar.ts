/**
 * A Microsoft 365 (Outlook) calendar behind the port, through the Microsoft Graph SDK (v1.0).
 * https://learn.microsoft.com/en-us/graph/api/resources/event
 *
 * - freeBusy: the calendar view of the range (recurrences expanded by Graph), every event not
 *   shown as free nor cancelled, times asked in UTC (`Prefer: outlook.timezone="UTC"`).
 * - createEvent: POST …/events, shown as busy, with `transactionId` = our uid so Graph does not
 *   create it twice when a retried POST arrives.
 * - deleteEvent: DELETE …/events/{id}; 404 is fine.
 * - changes: the calendar view's delta query; the token is the `@odata.deltaLink`; a delta token
 *   Graph no longer knows (410) → CalendarSyncExpired. The delta window is fixed when it starts
 *   (a day back to `syncAheadDays` ahead), so changes of meetings beyond it are not seen until the
 *   next start from null.
 * - The access token is refreshed with the refresh token when it is about to expire or Graph refuses
 *   it (401); `invalid_grant` → CalendarAuthError("access to the calendar was withdrawn").
 */
import type { Client } from '@microsoft/microsoft-graph-client';
import type { Logger } from '../../runtime/logger.ts';
import { CalendarSyncExpired, CalendarUnavailable, type CalendarChange, type CalendarClient, type CalendarCredentials } from '../calendar.ts';
import { AUTH_REASONS, failureForStatus, isCalendarError, unavailableCalendar } from '../failures.ts';
import { graphClient, graphPath } from './graph-client.ts';
import { refreshMicrosoft, type MicrosoftCredentials, type MicrosoftSettings } from './microsoft-oauth.ts';

export interface MicrosoftCalendarOptions {
  onRefreshed?: (credentials: CalendarCredentials) => Promise<void>;
  log?: Logger;
  /** How far ahead the delta window of `changes` reaches, days (default 730). */
  syncAheadDays?: number;
}

/** An access token this close to its expiry is refreshed first, ms. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const DAY_MS = 86_400_000;
const UTC = { Prefer: 'outlook.timezone="UTC"' };

interface GraphEvent {
  id: string;
  changeKey?: string;
  showAs?: string;
  isCancelled?: boolean;
  start?: { dateTime: string; timeZone: string };
  end?: { dateTime: string; timeZone: string };
  '@removed'?: { reason: string };
}
interface GraphPage {
  value: GraphEvent[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

/** Graph's dateTime has no zone of its own; asked in UTC, it is UTC. */
const utc = (t: { dateTime: string }) => new Date(/[zZ]|[+-]\d\d:\d\d$/.test(t.dateTime) ? t.dateTime : `${t.dateTime}Z`);

export function microsoftCalendar(settings: MicrosoftSettings | null, credentials: MicrosoftCredentials, opts: MicrosoftCalendarOptions = {}): CalendarClient {
  if (!settings) return unavailableCalendar('Microsoft 365 is not configured on this platform');
  let current = credentials;
  let refreshing: Promise<void> | null = null;

  const refresh = () =>
    (refreshing ??= (async () => {
      try {
        current = await refreshMicrosoft(settings, current);
        opts.onRefreshed?.(current).catch((err) => opts.log?.error({ err }, 'refreshed Microsoft credentials could not be stored'));
      } finally {
        refreshing = null;
      }
    })());
  // Refreshing happens before a call, outside the SDK: an error thrown inside its middleware would come out as its own GraphError.
  const client = graphClient(settings, async () => current.accessToken);
  const base = current.calendarId ? `/me/calendars/${encodeURIComponent(current.calendarId)}` : '/me';

  /** Runs one Graph call (once more after a refresh when the token is refused); failures become the port's errors. */
  async function graph<T>(work: (c: Client) => Promise<T>, { ok = [] as number[], syncing = false } = {}): Promise<T | null> {
    for (let attempt = 0; ; attempt++) {
      if (Date.parse(current.expiresAt) - Date.now() < REFRESH_MARGIN_MS) await refresh();
      try {
        return await work(client);
      } catch (err) {
        if (isCalendarError(err)) throw err;
        const status = (err as { statusCode?: number }).statusCode;
        const code = (err as { code?: string | null }).code;
        if (status === 401 && attempt === 0) {
          current = { ...current, expiresAt: new Date(0).toISOString() }; // refreshed at the next attempt
          continue;
        }
        if (status !== undefined && ok.includes(status)) return null;
        if (syncing && (status === 410 || /^(syncStateNotFound|resyncRequired)$/i.test(code ?? ''))) throw new CalendarSyncExpired();
        if (status === 404) throw failureForStatus(403, AUTH_REASONS.missing);
        // The SDK reports a request that got no answer with statusCode -1.
        throw failureForStatus(status === undefined || status < 0 ? undefined : status, AUTH_REASONS.withdrawn, { what: 'Microsoft 365' });
      }
    }
  }

  /** Every page of a listing, from its first request to the link with no next page. */
  async function pages(first: (c: Client) => Promise<GraphPage>, syncing = false): Promise<{ items: GraphEvent[]; deltaLink: string | null }> {
    const items: GraphEvent[] = [];
    let page = await graph(first, { syncing });
    for (;;) {
      items.push(...(page?.value ?? []));
      const next = page?.['@odata.nextLink'];
      if (!next) return { items, deltaLink: page?.['@odata.deltaLink'] ?? null };
      const path = graphPath(settings!, next);
      if (!path) throw new CalendarUnavailable('Microsoft 365 gave a link elsewhere');
      page = await graph((c) => c.api(path).headers(UTC).get(), { syncing });
    }
  }

  return {
    async freeBusy(from, to) {
      const { items } = await pages((c) =>
        c
          .api(`${base}/calendarView`)
          .headers(UTC)
          .query({ startDateTime: from.toISOString(), endDateTime: to.toISOString() })
          .select('showAs,isCancelled,start,end')
          .top(500)
          .get(),
      );
      return items
        .filter((e) => e.start && e.end && !e.isCancelled && e.showAs !== 'free')
        .map((e) => ({ start: utc(e.start!), end: utc(e.end!) }))
        .sort((a, b) => +a.start - +b.start);
    },

    async createEvent(event) {
      const created = await graph<GraphEvent>((c) =>
        c.api(`${base}/events`).headers(UTC).post({
          subject: event.title,
          body: { contentType: 'text', content: event.description },
          start: { dateTime: event.start.toISOString().replace('Z', ''), timeZone: 'UTC' },
          end: { dateTime: event.end.toISOString().replace('Z', ''), timeZone: 'UTC' },
          showAs: 'busy',
          transactionId: event.uid,
        }),
      );
      if (!created?.id) throw new CalendarUnavailable('Microsoft 365 did not answer with the event');
      return { id: created.id, etag: created.changeKey ?? null };
    },

    async deleteEvent(id) {
      await graph((c) => c.api(`/me/events/${encodeURIComponent(id)}`).delete(), { ok: [404] });
    },

    async changes(syncToken) {
      let listed;
      if (syncToken === null) {
        const now = Date.now();
        listed = await pages((c) =>
          c
            .api(`${base}/calendarView/delta`)
            .headers(UTC)
            .query({
              startDateTime: new Date(now - DAY_MS).toISOString(),
              endDateTime: new Date(now + (opts.syncAheadDays ?? 730) * DAY_MS).toISOString(),
            })
            .get(),
        );
      } else {
        const path = graphPath(settings, syncToken);
        if (!path) throw new CalendarSyncExpired();
        listed = await pages((c) => c.api(path).headers(UTC).get(), true);
      }
      if (!listed.deltaLink) throw new CalendarUnavailable('Microsoft 365 gave no delta link');
      if (syncToken === null) return { changes: [], syncToken: listed.deltaLink };
      const changes = listed.items.flatMap((e): CalendarChange[] => {
        if (e['@removed']) return [{ id: e.id, kind: 'deleted' }];
        if (!e.start || !e.end) return [];
        return [{ id: e.id, kind: 'changed', start: utc(e.start), end: utc(e.end), etag: e.changeKey ?? null, cancelled: e.isCancelled === true }];
      });
      return { changes, syncToken: listed.deltaLink };
    },
  };
}
