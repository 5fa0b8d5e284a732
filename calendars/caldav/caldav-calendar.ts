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
 * - events: calendar-multiget REPORTs of the event URLs (RFC 4791 §7.9); a URL the server no
 *   longer has (404 in the multistatus) is `deleted`, STATUS:CANCELLED is `cancelled`.
 * - 401/403 → CalendarAuthError; no answer, a timeout, 408/429/5xx → CalendarUnavailable.
 */
import {
  calendarQuery,
  createCalendarObject,
  createAccount,
  DAVNamespace,
  davRequest,
  deleteObject,
  fetchCalendarObjects,
  fetchCalendars,
  freeBusyQuery,
  getBasicAuthHeaders,
  getDAVAttribute,
  propfind,
  supportedReportSet,
  syncCollection,
  type DAVCalendar,
} from 'tsdav';
import { CalendarAuthError, CalendarSyncExpired, CalendarUnavailable, type BusyInterval, type CalendarChange, type CalendarClient, type CalendarCredentials } from '../calendar.ts';
import { AUTH_REASONS, failureForStatus, isCalendarError } from '../failures.ts';
import { busyIntervals, eventToICalendar, readBudget, readEvent, readFreeBusy, ReadBudgetExceeded } from './ical-event.ts';
import { guardedFetch } from '../../runtime/guarded-fetch.ts';

export type CaldavCredentials = Extract<CalendarCredentials, { kind: 'caldav' }>;

export interface CaldavOptions {
  /** Longest one request may take, ms (default 15 s). */
  timeoutMs?: number;
  /** `etag` compares ETags even where the server offers sync-collection (tests of the fallback). */
  sync?: 'auto' | 'etag';
  /**
   * Loopback and private addresses may be reached (SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: development
   * and tests only). Off by default: the address is the customer's, and the server must not be
   * made to ask its own network (127.0.0.1, 169.254.169.254, 10.x…) on its behalf.
   */
  allowPrivate?: boolean | ((origin: string) => boolean);
  /** The longest answer read, bytes (default 8 MB). */
  maxBytes?: number;
}

/** What the customer is told when the address (or a redirect, or what its name resolves to) is a private one. */
export const PRIVATE_ADDRESS_REASON = 'the calendar address points to a private or local network, which cannot be used';

const ETAG_TOKEN = 'etags:';
/** Event URLs asked in one calendar-multiget REPORT. */
const MULTIGET_BATCH = 100;

/** Whether a REPORT body asks for sync-collection (its 403 says the token, not the password, was refused). */
const isSyncReport = (init?: RequestInit) => init?.method === 'REPORT' && typeof init.body === 'string' && init.body.includes('sync-collection');

export function caldavCalendar(credentials: CaldavCredentials, opts: CaldavOptions = {}): CalendarClient {
  const headers = getBasicAuthHeaders({ username: credentials.username, password: credentials.password });
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const maxBytes = opts.maxBytes ?? 8 * 1024 * 1024;
  const send = guardedFetch({ allowPrivate: opts.allowPrivate ?? false, timeoutMs, maxBytes });

  /** Every request of tsdav goes through here: no answer and refusals become the port's errors. */
  const checkedFetch: typeof fetch = async (input, init) => {
    let res: Response;
    try {
      res = await send(input, init);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EFORBIDDENADDRESS') throw new CalendarUnavailable(PRIVATE_ADDRESS_REASON);
      if (code === 'ERESPONSETOOLARGE') throw new CalendarUnavailable('the calendar server answered with more than can be read');
      throw failureForStatus(undefined, AUTH_REASONS.password, { what: 'the calendar server' });
    }
    const s = res.status;
    if (s === 401 || (s === 403 && !isSyncReport(init)) || s === 408 || s === 429 || s >= 500) {
      await res.body?.cancel();
      throw failureForStatus(s, AUTH_REASONS.password, { what: 'the calendar server' });
    }
    return res;
  };
  const common = { headers, fetch: checkedFetch };

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

  /**
   * The events at `urls` as changes, by one calendar-multiget REPORT (RFC 4791 §7.9): a URL the
   * server answers 404 for (or without calendar data) is reported deleted. tsdav's own multiget
   * refuses the whole answer when one URL is 404, so the REPORT goes through its davRequest.
   */
  async function readChanges(cal: DAVCalendar, urls: string[]): Promise<CalendarChange[]> {
    if (urls.length === 0) return [];
    const rows = await davRequest({
      url: cal.url,
      init: {
        method: 'REPORT',
        headers: { ...headers, depth: '1' },
        namespace: 'c',
        body: {
          'calendar-multiget': {
            _attributes: getDAVAttribute([DAVNamespace.DAV, DAVNamespace.CALDAV]),
            'd:prop': { 'd:getetag': {}, 'c:calendar-data': {} },
            'd:href': urls.map((u) => new URL(u, cal.url).pathname),
          },
        },
      },
      fetch: checkedFetch,
    });
    // Not a multistatus: the REPORT failed as a whole (or the answer cannot be read).
    const failed = rows.find((r) => !(r.raw as { multistatus?: unknown } | undefined)?.multistatus);
    if (failed) throw failed.ok ? new CalendarUnavailable('the calendar server gave an answer that could not be read') : failureForStatus(failed.status, AUTH_REASONS.password, { what: 'the calendar server' });
    const byUrl = new Map(rows.filter((r) => r.href).map((r) => [absolute(r.href!, cal.url), r]));
    // Only what the server answered: a URL it left out of the answer is left out here too (read next time).
    return urls.flatMap((url): CalendarChange[] => {
      const row = byUrl.get(absolute(url, cal.url));
      if (!row) return [];
      if (row.status === 404 || row.status === 410) return [{ id: url, kind: 'deleted' }];
      if (!row.ok) throw failureForStatus(row.status, AUTH_REASONS.password, { what: 'the calendar server' });
      const data = row.props?.calendarData?._cdata ?? row.props?.calendarData;
      const event = typeof data === 'string' ? readEvent(data) : null;
      // An event that cannot be read (another app wrote it broken) is left as it was, not taken for deleted.
      if (event === 'unreadable') return [];
      // A resource that no longer holds an event is not a meeting any more.
      if (!event) return [{ id: url, kind: 'deleted' }];
      return [{ id: url, kind: 'changed', start: event.start, end: event.end, etag: row.props?.getetag == null ? null : String(row.props.getetag), cancelled: event.cancelled }];
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
        const budget = readBudget();
        try {
          return objects.flatMap((o) => (typeof o.data === 'string' ? busyIntervals(o.data, from, to, budget) : [])).sort((a, b) => +a.start - +b.start);
        } catch (err) {
          if (err instanceof ReadBudgetExceeded) throw new CalendarUnavailable(err.message);
          throw err;
        }
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

    events: (ids) =>
      port(async () => {
        const cal = await calendar();
        const states: CalendarChange[] = [];
        // Multiget answers every URL asked; batches keep one REPORT's body and answer bounded.
        for (let i = 0; i < ids.length; i += MULTIGET_BATCH) states.push(...(await readChanges(cal, ids.slice(i, i + MULTIGET_BATCH))));
        return states;
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
