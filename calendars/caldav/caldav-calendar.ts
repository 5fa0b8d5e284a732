/**
 * A CalDAV calendar (RFC 4791: iCloud, Fastmail, Nextcloud, Radicale…) behind the port, through
 * tsdav for discovery and the WebDAV requests and ical.js for the iCalendar inside them.
 *
 * - The address may be the calendar collection itself or a server / principal address: then the
 *   user's first calendar that holds VEVENTs is found (RFC 6764 discovery, principal, home set).
 * - freeBusy: the free-busy-query REPORT where the collection offers it, else a calendar-query
 *   with a time range, reading the events (recurrences expanded, transparent and cancelled ones skipped).
 * - createEvent: PUT `<uid>.ics` with `If-None-Match: *`; an event of that uid already there is the
 *   one a retried attempt wrote, so it is answered as written.
 * - changes: RFC 6578 sync-collection; a refused token (403 valid-sync-token) → CalendarSyncExpired.
 *   Without sync-collection the token is the ETag of every event and changes are a comparison.
 * - 401/403 → CalendarAuthError; no answer, a timeout, 408/429/5xx → CalendarUnavailable.
 */
import {
  calendarQuery,
  createCalendarObject,
  createAccount,
  deleteObject,
  fetchCalendarObjects,
  fetchCalendars,
  freeBusyQuery,
  getBasicAuthHeaders,
  propfind,
  supportedReportSet,
  syncCollection,
  type DAVCalendar,
} from 'tsdav';
import { CalendarAuthError, CalendarSyncExpired, CalendarUnavailable, type BusyInterval, type CalendarChange, type CalendarClient, type CalendarCredentials } from '../calendar.ts';
import { AUTH_REASONS, failureForStatus, isCalendarError } from '../failures.ts';
import { busyIntervals, eventToICalendar, readEvent, readFreeBusy } from './ical-event.ts';

export type CaldavCredentials = Extract<CalendarCredentials, { kind: 'caldav' }>;

export interface CaldavOptions {
  /** Longest one request may take, ms (default 15 s). */
  timeoutMs?: number;
  /** `etag` compares ETags even where the server offers sync-collection (tests of the fallback). */
  sync?: 'auto' | 'etag';
}

const ETAG_TOKEN = 'etags:';

/** Whether a REPORT body asks for sync-collection (its 403 says the token, not the password, was refused). */
const isSyncReport = (init?: RequestInit) => init?.method === 'REPORT' && typeof init.body === 'string' && init.body.includes('sync-collection');

export function caldavCalendar(credentials: CaldavCredentials, opts: CaldavOptions = {}): CalendarClient {
  const headers = getBasicAuthHeaders({ username: credentials.username, password: credentials.password });
  const timeoutMs = opts.timeoutMs ?? 15_000;

  /** Every request of tsdav goes through here: no answer and refusals become the port's errors. */
  const guardedFetch: typeof fetch = async (input, init) => {
    let res: Response;
    try {
      res = await fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
    } catch {
      throw failureForStatus(undefined, AUTH_REASONS.password, { what: 'the calendar server' });
    }
    const s = res.status;
    if (s === 401 || (s === 403 && !isSyncReport(init)) || s === 408 || s === 429 || s >= 500) {
      await res.body?.cancel();
      throw failureForStatus(s, AUTH_REASONS.password, { what: 'the calendar server' });
    }
    return res;
  };
  const common = { headers, fetch: guardedFetch };

  /**
   * tsdav's own errors are not the port's: while finding the calendar they mean there is none to
   * find; afterwards, an answer that could not be read (it may pass).
   */
  const port = async <T>(work: () => Promise<T>, otherwise: () => Error = () => new CalendarUnavailable('the calendar server gave an answer that could not be read')): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (isCalendarError(err)) throw err;
      throw otherwise();
    }
  };

  let found: Promise<DAVCalendar> | null = null;
  const calendar = () =>
    (found ??= port(discover, () => new CalendarAuthError(AUTH_REASONS.missing)).catch((err) => ((found = null), Promise.reject(err))));

  async function discover(): Promise<DAVCalendar> {
    const url = new URL(credentials.url).href;
    const [self] = await propfind({
      url,
      props: { 'd:resourcetype': {}, 'c:supported-calendar-component-set': {} },
      depth: '0',
      ...common,
    });
    const types = Object.keys(self?.props?.resourcetype ?? {});
    const comps = componentNames(self?.props?.supportedCalendarComponentSet?.comp);
    if (self?.ok && types.includes('calendar') && (comps.length === 0 || comps.includes('VEVENT'))) {
      const collection: DAVCalendar = { url: url.endsWith('/') ? url : `${url}/` };
      return { ...collection, reports: await supportedReportSet({ collection, ...common }) };
    }
    const account = await createAccount({
      account: { serverUrl: url, accountType: 'caldav', credentials: { username: credentials.username, password: credentials.password } },
      ...common,
    });
    const calendars = await fetchCalendars({ account, ...common });
    const first = calendars.find((c) => !c.components?.length || c.components.includes('VEVENT'));
    if (!first) throw new CalendarAuthError(AUTH_REASONS.missing);
    return first;
  }

  const absolute = (href: string, base: string) => new URL(href, base).href;

  async function etagOf(url: string): Promise<string | null> {
    const [r] = await propfind({ url, props: { 'd:getetag': {} }, depth: '0', ...common });
    return r?.props?.getetag == null ? null : String(r.props.getetag);
  }

  /** The events at `urls` as changes (the ones gone since are reported deleted). */
  async function readChanges(cal: DAVCalendar, urls: string[]): Promise<CalendarChange[]> {
    if (urls.length === 0) return [];
    const objects = await fetchCalendarObjects({ calendar: cal, objectUrls: urls, urlFilter: () => true, ...common });
    const byUrl = new Map(objects.map((o) => [absolute(o.url, cal.url), o]));
    return urls.map((url): CalendarChange => {
      const o = byUrl.get(url);
      const event = typeof o?.data === 'string' ? readEvent(o.data) : null;
      if (!o || !event) return { id: url, kind: 'deleted' };
      return { id: url, kind: 'changed', start: event.start, end: event.end, etag: o.etag ?? null, cancelled: event.cancelled };
    });
  }

  /** Every event's URL and ETag (the fallback without sync-collection). */
  async function allEtags(cal: DAVCalendar): Promise<Record<string, string>> {
    const rows = await calendarQuery({
      url: cal.url,
      props: { 'd:getetag': {} },
      filters: { 'comp-filter': { _attributes: { name: 'VCALENDAR' }, 'comp-filter': { _attributes: { name: 'VEVENT' } } } },
      depth: '1',
      ...common,
    });
    const out: Record<string, string> = {};
    for (const r of rows) if (r.ok && r.href && r.props?.getetag != null) out[absolute(r.href, cal.url)] = String(r.props.getetag);
    return out;
  }

  async function etagChanges(cal: DAVCalendar, token: string | null) {
    const now = await allEtags(cal);
    const next = ETAG_TOKEN + Buffer.from(JSON.stringify(now)).toString('base64url');
    if (token === null) return { changes: [], syncToken: next };
    let before: Record<string, string>;
    try {
      before = JSON.parse(Buffer.from(token.slice(ETAG_TOKEN.length), 'base64url').toString('utf8'));
    } catch {
      throw new CalendarSyncExpired();
    }
    const changed = Object.keys(now).filter((url) => before[url] !== now[url]);
    const deleted = Object.keys(before).filter((url) => !(url in now));
    return { changes: [...(await readChanges(cal, changed)), ...deleted.map((id): CalendarChange => ({ id, kind: 'deleted' }))], syncToken: next };
  }

  return {
    freeBusy: (from, to) =>
      port(async () => {
        const cal = await calendar();
        const timeRange = { start: from.toISOString(), end: to.toISOString() };
        if (cal.reports?.includes('freeBusyQuery')) {
          const answer = await freeBusyQuery({ url: cal.url, timeRange, depth: '1', ...common });
          if (answer.ok && typeof answer.raw === 'string') return clip(readFreeBusy(answer.raw), from, to);
        }
        const objects = await fetchCalendarObjects({ calendar: cal, timeRange, urlFilter: () => true, ...common });
        return objects.flatMap((o) => (typeof o.data === 'string' ? busyIntervals(o.data, from, to) : [])).sort((a, b) => +a.start - +b.start);
      }),

    createEvent: (event) =>
      port(async () => {
        const cal = await calendar();
        const filename = `${encodeURIComponent(event.uid)}.ics`;
        const url = absolute(filename, cal.url);
        const res = await createCalendarObject({
          calendar: cal,
          filename,
          iCalString: eventToICalendar(event),
          ...common,
          headers: { ...headers, 'content-type': 'text/calendar; charset=utf-8', 'if-none-match': '*' },
        });
        await res.body?.cancel();
        if (!res.ok && res.status !== 412) throw failureForStatus(res.status, AUTH_REASONS.password, { what: 'the calendar server' });
        return { id: url, etag: res.headers.get('etag') ?? (await etagOf(url)) };
      }),

    deleteEvent: (id) =>
      port(async () => {
        const res = await deleteObject({ url: id, ...common });
        await res.body?.cancel();
        if (!res.ok && res.status !== 404 && res.status !== 410) throw failureForStatus(res.status, AUTH_REASONS.password, { what: 'the calendar server' });
      }),

    changes: (syncToken) =>
      port(async () => {
        const cal = await calendar();
        if (opts.sync === 'etag' || !cal.reports?.includes('syncCollection') || syncToken?.startsWith(ETAG_TOKEN)) return etagChanges(cal, syncToken);
        if (syncToken === null) {
          const [r] = await propfind({ url: cal.url, props: { 'd:sync-token': {} }, depth: '0', ...common });
          if (!r?.props?.syncToken) return etagChanges(cal, null);
          return { changes: [], syncToken: String(r.props.syncToken) };
        }
        const rows = await syncCollection({ url: cal.url, props: { 'd:getetag': {} }, syncLevel: 1, syncToken, ...common });
        const top = rows[0];
        if (top && !top.ok && !top.props && (top.status === 403 || top.status === 409 || top.status === 412)) throw new CalendarSyncExpired();
        const next = top?.raw?.multistatus?.syncToken;
        if (!next) throw failureForStatus(top?.status ?? 502, AUTH_REASONS.password, { what: 'the calendar server' });
        const entries = rows.filter((r) => r.href && absolute(r.href, cal.url) !== cal.url);
        const changed = entries.filter((r) => r.ok).map((r) => absolute(r.href!, cal.url));
        const deleted = entries.filter((r) => r.status === 404).map((r): CalendarChange => ({ id: absolute(r.href!, cal.url), kind: 'deleted' }));
        return { changes: [...(await readChanges(cal, changed)), ...deleted], syncToken: String(next) };
      }),
  };
}

/** `<comp name="VEVENT"/>` (one or several) as names. */
function componentNames(comp: unknown): string[] {
  const list = Array.isArray(comp) ? comp : comp ? [comp] : [];
  return list.map((c) => String((c as { _attributes?: { name?: string } })?._attributes?.name ?? '').toUpperCase()).filter(Boolean);
}

function clip(intervals: BusyInterval[], from: Date, to: Date): BusyInterval[] {
  return intervals.filter((i) => i.start < to && i.end > from).sort((a, b) => +a.start - +b.start);
}
