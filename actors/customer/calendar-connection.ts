import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { createCalendarConnectionRepository, type CalendarConnectionRow } from '../../db/calendar-connections.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { iso, type Mode } from '../../runtime/types.ts';
import { CalendarAuthError, CalendarUnavailable, type CalendarClient, type CalendarCredentials } from '../../calendars/calendar.ts';
import type { CalendarOpener } from '../../calendars/open-calendar.ts';
import { refreshReadiness } from './readiness-check.ts';
import { checkEndpointUrl } from '../webhooks/address-guard.ts';

/**
 * The customer's calendar connection (issue 24): connecting it with a check, disconnecting it,
 * and the periodic check that finds one that stopped working. Credentials are sealed with the
 * secret box at rest and never logged nor returned. A change of the calendar step re-assesses
 * readiness in the same transaction, as every other step does.
 */

/** A working connection is checked every 6 hours; a failing one every 15 minutes. */
export const CHECK_WORKING_MS = 6 * 3_600_000;
export const CHECK_FAILING_MS = 15 * 60_000;
/** `CalendarUnavailable` this many checks in a row and a working connection is failing. */
export const UNAVAILABLE_CHECKS_TO_FAIL = 3;
/** The check on connect reads free/busy this far ahead. */
const CHECK_FREE_BUSY_MS = 7 * 86_400_000;
/** The probe event: one year ahead, 15 minutes, deleted at once. */
const PROBE_AHEAD_MS = 365 * 86_400_000;
const PROBE_MS = 15 * 60_000;
export const PROBE_TITLE = 'Connection check';
/**
 * The whole check on connect, every request of it: it runs in the customer's actor, whose asks
 * give up after 30 s, so a calendar server that answers each request slowly (each within its own
 * 15 s) must not hold the actor, and every write of the customer queued behind it, for minutes.
 */
export const CONNECT_CHECK_MS = 25_000;

/** What the calendar room needs from app/: the opener and the secret box. */
export interface CalendarRooms {
  calendars: CalendarOpener;
  secrets: { seal(plain: string): Buffer; open(sealed: Buffer): string };
}

type CalendarDeps = Pick<Deps, 'pool' | 'clock' | 'log'> & CalendarRooms & {
  /** The check on connect's deadline (default CONNECT_CHECK_MS; tests shorten it). */
  connectCheckMs?: number;
  /** SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: a calendar address on a private network (local development and tests only). */
  allowPrivateAddresses?: boolean;
};

/** GET /v1/customers/{id}/calendar: never the credentials. */
export function calendarConnectionView(customerId: string, row: CalendarConnectionRow | null) {
  return {
    object: 'calendar_connection' as const,
    customer_id: customerId,
    status: row ? row.status : ('not_connected' as const),
    kind: row?.kind ?? null,
    label: row?.label ?? null,
    connected_at: iso(row?.connected_at ?? null),
    checked_at: iso(row?.checked_at ?? null),
    failure: row && row.status === 'failing' ? { code: row.failure_code ?? 'calendar_unavailable', message: row.failure_message ?? '' } : null,
  };
}
export type CalendarConnectionView = ReturnType<typeof calendarConnectionView>;

/** What the customer recognises a connection by: a CalDAV address without user name or password, or the account's email. */
export function labelOf(c: CalendarCredentials): string {
  switch (c.kind) {
    case 'caldav': {
      try {
        const u = new URL(c.url);
        u.username = '';
        u.password = '';
        u.search = '';
        u.hash = '';
        return u.toString();
      } catch {
        return 'Calendar';
      }
    }
    case 'google':
      return c.email ?? 'Google Calendar';
    case 'microsoft':
      return c.email ?? 'Microsoft 365';
    case 'simulated':
      return 'Test calendar';
  }
}

/** The reason a calendar failed, for the customer: never a secret, never a stack. */
export function failureOf(err: unknown): { code: string; message: string; unavailable: boolean } {
  if (err instanceof CalendarAuthError) return { code: err.code, message: err.reason, unavailable: false };
  if (err instanceof CalendarUnavailable) return { code: err.code, message: err.reason, unavailable: true };
  return { code: 'calendar_unavailable', message: 'the calendar did not answer as a calendar server should', unavailable: true };
}

/**
 * Opens a stored connection's calendar; a refreshed OAuth token is sealed and stored again.
 * For the booking and sync paths as well as the check.
 */
export function openConnection(deps: CalendarDeps, row: CalendarConnectionRow): CalendarClient {
  const credentials = JSON.parse(deps.secrets.open(row.credentials)) as CalendarCredentials;
  return deps.calendars.open(credentials, async (fresh) => {
    await createCalendarConnectionRepository(deps.pool).updateCredentials(row.customer_id, deps.secrets.seal(JSON.stringify(fresh)), deps.clock.now());
  });
}

/**
 * Connects the customer's calendar: opens it, checks it (free/busy over the next 7 days, a probe
 * event written and deleted), takes the sync token from which changes are read, then seals and
 * stores the credentials (replacing any earlier connection) with readiness re-assessed. A failed
 * check stores nothing: `calendar_connection_failed` with the reason.
 */
export async function connectCalendar(
  deps: CalendarDeps,
  customer: { id: string; accountId: string; mode: Mode },
  credentials: CalendarCredentials,
): Promise<CalendarConnectionView> {
  // Test mode books into the simulated calendar; a live customer's calendar is a real one.
  if ((customer.mode === 'test') !== (credentials.kind === 'simulated')) {
    throw new Refusal('calendar_connection_failed', customer.mode === 'test' ? 'A test customer connects the simulated test calendar.' : 'A live customer connects its own calendar, not the test calendar.');
  }
  // A calendar address is a place the service sends requests (with the customer's password): as
  // for webhooks, only public addresses, never our own network, the host or the cloud metadata.
  if (credentials.kind === 'caldav') {
    const check = await checkEndpointUrl(credentials.url, { mode: 'test', allowPrivate: deps.allowPrivateAddresses === true });
    if (!check.ok) {
      deps.log.info({ customer_id: customer.id, kind: 'caldav', reason: check.reason }, 'calendar address refused; nothing stored');
      throw new Refusal('calendar_connection_failed', `The calendar could not be connected: the calendar's address must be one reachable over the internet (${check.reason})`);
    }
  }
  let current = credentials;
  let syncToken: string;
  const check = async () => {
    const client = deps.calendars.open(credentials, async (fresh) => {
      current = fresh;
    });
    const now = deps.clock.now();
    await client.freeBusy(now, new Date(now.getTime() + CHECK_FREE_BUSY_MS));
    const start = new Date(Math.ceil((now.getTime() + PROBE_AHEAD_MS) / PROBE_MS) * PROBE_MS);
    const probe = await client.createEvent({
      uid: `connection-check-${crypto.randomUUID()}`,
      start,
      end: new Date(start.getTime() + PROBE_MS),
      timezone: 'UTC',
      title: PROBE_TITLE,
      description: 'Written and deleted at once to check that meetings can be booked into this calendar.',
    });
    await client.deleteEvent(probe.id);
    return (await client.changes(null)).syncToken;
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const checked = check();
    // Lost to the deadline, the check's own requests still end within their timeouts; its result is dropped.
    checked.catch(() => {});
    syncToken = await Promise.race([
      checked,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CalendarUnavailable('the calendar server took too long to answer')), deps.connectCheckMs ?? CONNECT_CHECK_MS);
      }),
    ]);
  } catch (err) {
    if (isDatabaseUnreachable(err)) throw err;
    const failure = failureOf(err);
    deps.log.info({ customer_id: customer.id, kind: credentials.kind, code: failure.code, err: err instanceof CalendarAuthError || err instanceof CalendarUnavailable ? undefined : err }, 'calendar connection check failed; nothing stored');
    throw new Refusal('calendar_connection_failed', `The calendar could not be connected: ${failure.message}.`);
  } finally {
    clearTimeout(timer);
  }
  const now = deps.clock.now();
  const row = await withTransaction(deps.pool, async (client) => {
    if (!(await createCustomerRepository(client).lock(customer.id))) throw new Refusal('customer_not_found');
    const saved = await createCalendarConnectionRepository(client).upsert({
      customer_id: customer.id,
      account_id: customer.accountId,
      mode: customer.mode,
      kind: current.kind,
      credentials: deps.secrets.seal(JSON.stringify(current)),
      label: labelOf(current),
      sync_token: syncToken,
      now,
      checkDueAt: new Date(now.getTime() + CHECK_WORKING_MS),
    });
    await refreshReadiness(client, { customerId: customer.id }, now);
    return saved;
  });
  deps.log.info({ customer_id: customer.id, kind: row.kind }, 'calendar connected');
  return calendarConnectionView(customer.id, row);
}

/** Disconnects the customer's calendar (`calendar_not_connected` when there is none); readiness re-assessed. */
export async function disconnectCalendar(deps: CalendarDeps, customerId: string): Promise<CalendarConnectionView> {
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (client) => {
    if (!(await createCustomerRepository(client).lock(customerId))) throw new Refusal('customer_not_found');
    if (!(await createCalendarConnectionRepository(client).remove(customerId))) throw new Refusal('calendar_not_connected');
    await refreshReadiness(client, { customerId }, now);
  });
  return calendarConnectionView(customerId, null);
}

export async function calendarConnectionOf(db: Queryable, customerId: string): Promise<CalendarConnectionView> {
  return calendarConnectionView(customerId, await createCalendarConnectionRepository(db).get(customerId));
}

/**
 * One periodic check of a connection: free/busy over the next 7 days (an OAuth token is
 * refreshed on the way; no probe event is written, so the business's calendar is not touched
 * every 6 hours). A refusal of the credentials fails the connection at once; an unreachable
 * calendar fails it on the third check in a row. A failing connection that answers again is
 * working again. Recorded only if the connection was not replaced or removed meanwhile.
 */
export async function checkConnection(deps: CalendarDeps, row: CalendarConnectionRow): Promise<CalendarConnectionRow | null> {
  let failure: ReturnType<typeof failureOf> | null = null;
  try {
    const client = openConnection(deps, row);
    const now = deps.clock.now();
    await client.freeBusy(now, new Date(now.getTime() + CHECK_FREE_BUSY_MS));
  } catch (err) {
    if (isDatabaseUnreachable(err)) throw err;
    failure = failureOf(err);
    if (!(err instanceof CalendarAuthError) && !(err instanceof CalendarUnavailable)) deps.log.warn({ err, customer_id: row.customer_id }, 'calendar check failed unexpectedly');
  }
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (client) => {
    const repo = createCalendarConnectionRepository(client);
    const locked = await repo.lock(row.customer_id);
    // Replaced (connected again) or removed while the calendar was asked: the new one stands.
    if (!locked || locked.connected_at.getTime() !== row.connected_at.getTime()) return null;
    let saved: CalendarConnectionRow | null;
    if (!failure) {
      saved = await repo.recordCheck(row.customer_id, { ok: true, now, checkDueAt: new Date(now.getTime() + CHECK_WORKING_MS) });
    } else if (failure.unavailable && locked.status === 'working' && locked.unavailable_checks + 1 < UNAVAILABLE_CHECKS_TO_FAIL) {
      saved = await repo.recordUnavailable(row.customer_id, now, new Date(now.getTime() + CHECK_FAILING_MS));
    } else {
      const message = failure.unavailable && locked.status === 'working' ? `${failure.message}, ${UNAVAILABLE_CHECKS_TO_FAIL} checks in a row` : failure.message;
      saved = await repo.recordCheck(row.customer_id, { ok: false, now, checkDueAt: new Date(now.getTime() + CHECK_FAILING_MS), code: failure.code, message });
    }
    if (saved && saved.status !== locked.status) {
      await refreshReadiness(client, { customerId: row.customer_id }, now);
      deps.log.info({ customer_id: row.customer_id, status: saved.status, code: saved.failure_code }, 'calendar connection changed status');
    }
    return saved;
  });
}

/** The job `check_calendars`: every connection whose check is due; answers how many were checked. */
export async function checkDueCalendars(deps: CalendarDeps, now: Date, limit = 50): Promise<number> {
  const due = await createCalendarConnectionRepository(deps.pool).due(now, limit);
  for (const row of due) {
    try {
      await checkConnection(deps, row);
    } catch (err) {
      if (isDatabaseUnreachable(err)) throw err;
      deps.log.error({ err, customer_id: row.customer_id }, 'calendar check could not be recorded; it runs again next round');
    }
  }
  return due.length;
}
