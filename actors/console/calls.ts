import type { Queryable } from '../../db/pool.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Config } from '../../runtime/config.ts';
import type { CallRow } from '../../db/calls.ts';
import { createConsoleCallReads } from '../../db/console-calls.ts';
import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import type { CallRequests } from '../call/requests.ts';
import { appointmentView, callView } from '../call/views.ts';
import { complianceTrail } from '../scheduler/compliance-trail.ts';

/** The console's call list filters; `from`/`to` bound when the request was made (`to` excluded). */
export interface ConsoleCallFilter {
  customerId: string | null;
  status: string | null;
  outcome: string | null;
  from: Date | null;
  to: Date | null;
  page: Page;
}

/**
 * What the reseller console reads of calls and appointments (issue 21). Plain reads in the
 * caller's account and mode; the call itself comes from the same service as GET /v1/calls/{id}
 * (`call_not_found` for another account's or mode's), so the console cannot see more than a key.
 */
export function createConsoleCalls(pool: Queryable, config: Pick<Config, 'publicUrl'>, callRequests: CallRequests) {
  const reads = createConsoleCallReads(pool);
  // Read at each answer: the public URL is known once the service listens.
  const view = (row: CallRow) => callView(row, config.publicUrl);
  return {
    /** Every request (queued ones too) in the /v1 call shape, newest first. */
    async list(accountId: string, mode: Mode, f: ConsoleCallFilter) {
      const before = await pageStart(pool, f.page, { table: 'calls', accountId, mode });
      const rows = await reads.listCalls({ accountId, mode, customerId: f.customerId, status: f.status, outcome: f.outcome, from: f.from, to: f.to, limit: f.page.limit + 1, beforeSeq: before });
      return toList(rows, f.page.limit, view);
    },

    /** A call's page: the call, its transcript, whether it has a recording, and its compliance trail. */
    async page(accountId: string, mode: Mode, id: string) {
      const call = await callRequests.getCall(accountId, mode, id);
      const [record, refusedStarts, hold] = await Promise.all([
        createComplianceRecordRepository(pool).produce(call.id),
        reads.refusedStarts(accountId, call.id),
        reads.holdOf(accountId, call.id),
      ]);
      return {
        call: view(call),
        transcript: call.transcript.length > 0 ? { object: 'transcript' as const, call_id: call.id, lines: call.transcript } : null,
        hasRecording: Boolean(call.recording_url && call.carrier),
        complianceTrail: complianceTrail({ call, record: record!, refusedStarts, hold }),
      };
    },

    /** Appointments in the /v1 shape with their customer's name and time zone; `from`/`to` bound the meeting's start. */
    async appointments(accountId: string, mode: Mode, f: { customerId: string | null; from: Date | null; to: Date | null; page: Page }) {
      const before = await pageStart(pool, f.page, { table: 'appointments', accountId, mode });
      const rows = await reads.listAppointments({ accountId, mode, customerId: f.customerId, from: f.from, to: f.to, limit: f.page.limit + 1, beforeSeq: before });
      return toList(rows, f.page.limit, (a) => ({ ...appointmentView(a), customer_name: a.customer_name, customer_timezone: a.customer_timezone }));
    },
  };
}

export type ConsoleCalls = ReturnType<typeof createConsoleCalls>;
