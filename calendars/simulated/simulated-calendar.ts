import crypto from 'node:crypto';
import type { Queryable } from '../../db/pool.ts';
import { createSimulatedCalendarRepository } from '../../db/simulated-calendars.ts';
import { CalendarSyncExpired, type CalendarChanges, type CalendarClient, type CalendarEventInput, type CalendarEventRef } from '../calendar.ts';

/** Sync tokens of the simulated calendar: `sim:<version>`. */
const TOKEN_PREFIX = 'sim:';

/**
 * The calendar of test mode: the same interface as a real one, kept in PostgreSQL
 * (simulated_calendar_events) so every process sees the same events. A test, or a reseller in
 * test mode, moves and deletes its events as the business would in its calendar app
 * (`moveEvent`, `deleteEvent`) and adds busy blocks (`createEvent`).
 */
export function simulatedCalendar(pool: Queryable, calendarId: string): CalendarClient & {
  moveEvent(id: string, start: Date, end: Date): Promise<CalendarEventRef | null>;
} {
  const repo = () => createSimulatedCalendarRepository(pool);
  return {
    async freeBusy(from, to) {
      const rows = await repo().busy(calendarId, from, to);
      return rows.map((r) => ({ start: r.start_at, end: r.end_at }));
    },

    async createEvent(e: CalendarEventInput) {
      const row = await repo().put({ calendarId, id: crypto.randomUUID(), uid: e.uid, summary: e.title, description: e.description, start: e.start, end: e.end });
      return { id: row.id, etag: row.etag };
    },

    async deleteEvent(id) {
      await repo().remove(calendarId, id);
    },

    async moveEvent(id, start, end) {
      const row = await repo().move(calendarId, id, start, end);
      return row ? { id: row.id, etag: row.etag } : null;
    },

    async events(ids) {
      return Promise.all(
        ids.map(async (id) => {
          const r = await repo().get(calendarId, id);
          return !r || r.deleted ? { id, kind: 'deleted' as const } : { id, kind: 'changed' as const, start: r.start_at, end: r.end_at, etag: r.etag, cancelled: false };
        }),
      );
    },

    async changes(syncToken): Promise<CalendarChanges> {
      if (syncToken === null) return { changes: [], syncToken: `${TOKEN_PREFIX}${await repo().latest(calendarId)}` };
      if (!syncToken.startsWith(TOKEN_PREFIX) || !/^\d+$/.test(syncToken.slice(TOKEN_PREFIX.length))) throw new CalendarSyncExpired();
      const { rows, latest } = await repo().changedSince(calendarId, BigInt(syncToken.slice(TOKEN_PREFIX.length)));
      return {
        changes: rows.map((r) => (r.deleted ? { id: r.id, kind: 'deleted' as const } : { id: r.id, kind: 'changed' as const, start: r.start_at, end: r.end_at, etag: r.etag, cancelled: false })),
        syncToken: `${TOKEN_PREFIX}${latest}`,
      };
    },
  };
}
