/**
 * Google Calendar behind the port, through the official client (@googleapis/calendar, v3 API) and
 * its OAuth2 client, which refreshes the access token itself when it has expired or a request is
 * refused with 401; each refresh is handed to `onRefreshed` to be sealed and stored.
 * https://developers.google.com/calendar/api/v3/reference
 *
 * - freeBusy: freebusy.query of the connected calendar.
 * - createEvent: events.insert with an event id derived from our uid (lower-case hex is within
 *   Google's base32hex ids), so a retried insert meets 409 and answers the event already written.
 * - deleteEvent: events.delete; 404 and 410 (already deleted) are fine.
 * - changes: events.list with the sync token (deleted events come back `status: cancelled`); a
 *   token Google no longer accepts is 410 → CalendarSyncExpired; from null, the full list is paged
 *   through to its `nextSyncToken`.
 * - A refresh refused with `invalid_grant` (revoked, expired) → CalendarAuthError("access to the
 *   calendar was withdrawn"); 401 after refreshing, or 403 not a rate limit → the same; 429, 5xx,
 *   a 403 rate limit and no answer → CalendarUnavailable.
 */
import { calendar as calendarApi, type calendar_v3 } from '@googleapis/calendar';
import type { Logger } from '../../runtime/logger.ts';
import { CalendarSyncExpired, CalendarUnavailable, type CalendarChange, type CalendarClient, type CalendarCredentials } from '../calendar.ts';
import { AUTH_REASONS, failureForStatus, isCalendarError, unavailableCalendar } from '../failures.ts';
import { googleOAuthClient, tokenFailure, type GoogleCredentials, type GoogleSettings } from './google-oauth.ts';

export interface GoogleCalendarOptions {
  onRefreshed?: (credentials: CalendarCredentials) => Promise<void>;
  log?: Logger;
  /** Longest one request may take, ms (default 15 s). */
  timeoutMs?: number;
}

/** Google's reasons of a 403 that say "slow down", not "no access" (Calendar API, "Handle API errors"). */
const RATE_LIMITS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);

/** The event id Google will accept for our uid: hex digits are base32hex, 5 to 1024 characters. */
export const googleEventId = (uid: string) => Buffer.from(uid, 'utf8').toString('hex').padEnd(5, '0').slice(0, 1024);

interface GoogleApiFailure {
  response?: { status?: number; data?: { error?: unknown } };
  config?: { url?: unknown };
}

export function googleCalendar(settings: GoogleSettings | null, credentials: GoogleCredentials, opts: GoogleCalendarOptions = {}): CalendarClient {
  if (!settings) return unavailableCalendar('Google Calendar is not configured on this platform');
  let current = credentials;
  const auth = googleOAuthClient(settings);
  auth.forceRefreshOnFailure = true;
  auth.setCredentials({ access_token: current.accessToken, refresh_token: current.refreshToken, expiry_date: Date.parse(current.expiresAt) });
  auth.on('tokens', (tokens) => {
    if (!tokens.access_token) return;
    current = {
      ...current,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? current.refreshToken,
      expiresAt: new Date(tokens.expiry_date ?? Date.now() + 3600_000).toISOString(),
    };
    opts.onRefreshed?.(current).catch((err) => opts.log?.error({ err }, 'refreshed Google credentials could not be stored'));
  });
  const api = calendarApi({ version: 'v3', auth });
  // The generated methods take the API's origin per call (a global rootUrl is not used for the URL).
  const call = { rootUrl: `${settings.apiUrl}/`, retry: false, timeout: opts.timeoutMs ?? 15_000 };
  const calendarId = current.calendarId;

  /**
   * Runs one API call; its failure becomes the port's error. Statuses in `ok` are answered with
   * null; `syncing` makes a 410 the sync token's expiry (elsewhere 410 is an event already deleted).
   */
  async function google<T>(work: () => Promise<{ data: T }>, { ok = [] as number[], syncing = false } = {}): Promise<T | null> {
    try {
      return (await work()).data;
    } catch (err) {
      if (isCalendarError(err)) throw err;
      const failure = err as GoogleApiFailure;
      const status = failure.response?.status;
      // A failed refresh is an answer of the token endpoint, not of the Calendar API.
      if (String(failure.config?.url ?? '').startsWith(settings!.tokenUrl)) throw tokenFailure(err);
      if (status !== undefined && ok.includes(status)) return null;
      if (status === 410 && syncing) throw new CalendarSyncExpired();
      const body = failure.response?.data?.error as { errors?: { reason?: string }[] } | undefined;
      const reason = body?.errors?.[0]?.reason;
      if (status === 404) throw failureForStatus(403, AUTH_REASONS.missing);
      throw failureForStatus(status, AUTH_REASONS.withdrawn, { forbiddenMayPass: !!reason && RATE_LIMITS.has(reason), what: 'Google Calendar' });
    }
  }

  async function listAll(syncToken: string | null): Promise<{ items: calendar_v3.Schema$Event[]; nextSyncToken: string }> {
    const items: calendar_v3.Schema$Event[] = [];
    let pageToken: string | undefined;
    for (;;) {
      const page = await google<calendar_v3.Schema$Events>(() =>
        api.events.list({ calendarId, maxResults: 2500, showDeleted: true, pageToken, syncToken: syncToken ?? undefined }, call),
        { syncing: syncToken !== null },
      );
      items.push(...(page?.items ?? []));
      if (page?.nextPageToken) pageToken = page.nextPageToken;
      else if (page?.nextSyncToken) return { items, nextSyncToken: page.nextSyncToken };
      else throw new CalendarUnavailable('Google Calendar gave no sync token');
    }
  }

  return {
    async freeBusy(from, to) {
      const answer = await google<calendar_v3.Schema$FreeBusyResponse>(() =>
        api.freebusy.query({ requestBody: { timeMin: from.toISOString(), timeMax: to.toISOString(), items: [{ id: calendarId }] } }, call),
      );
      const entry = answer?.calendars?.[calendarId] ?? Object.values(answer?.calendars ?? {})[0];
      const error = entry?.errors?.[0]?.reason;
      if (error === 'notFound') throw failureForStatus(403, AUTH_REASONS.missing);
      if (error) throw new CalendarUnavailable(`Google Calendar could not read free/busy (${error})`);
      return (entry?.busy ?? [])
        .map((b) => ({ start: new Date(b.start!), end: new Date(b.end!) }))
        .sort((a, b) => +a.start - +b.start);
    },

    async createEvent(event) {
      const id = googleEventId(event.uid);
      const requestBody: calendar_v3.Schema$Event = {
        id,
        iCalUID: event.uid,
        summary: event.title,
        description: event.description,
        start: { dateTime: event.start.toISOString(), timeZone: event.timezone },
        end: { dateTime: event.end.toISOString(), timeZone: event.timezone },
        transparency: 'opaque',
        status: 'confirmed',
      };
      const created = await google<calendar_v3.Schema$Event>(() => api.events.insert({ calendarId, requestBody }, call), { ok: [409] });
      const written = created ?? (await google<calendar_v3.Schema$Event>(() => api.events.get({ calendarId, eventId: id }, call)));
      return { id: written?.id ?? id, etag: written?.etag ?? null };
    },

    async deleteEvent(id) {
      await google(() => api.events.delete({ calendarId, eventId: id }, call), { ok: [404, 410] });
    },

    async changes(syncToken) {
      const listed = await listAll(syncToken);
      if (syncToken === null) return { changes: [], syncToken: listed.nextSyncToken };
      // Deleted events come back `cancelled`; all-day events (a date, no time) cannot be meetings of ours and are left out.
      const changes = listed.items.flatMap((e): CalendarChange[] => {
        if (!e.id) return [];
        if (e.status === 'cancelled') return [{ id: e.id, kind: 'deleted' }];
        if (!e.start?.dateTime || !e.end?.dateTime) return [];
        return [{ id: e.id, kind: 'changed', start: new Date(e.start.dateTime), end: new Date(e.end.dateTime), etag: e.etag ?? null, cancelled: false }];
      });
      return { changes, syncToken: listed.nextSyncToken };
    },
  };
}
