import type { Deps } from '../../runtime/deps.ts';
import type { EntityRegistry } from '../../runtime/actor-system.ts';
import { FINAL_CARRIER_STATUSES, type AmdReport, type CarrierStatusReport, type RecordingReport } from '../../telephony/carrier.ts';
import { createCarrierReportRepository, type CarrierReportRow } from '../../db/carrier-reports.ts';
import type { CallMessage, CallReplies } from './messages.ts';
import { tickBatch } from './tick-batch.ts';

/**
 * The carrier inbox: what the carrier tells us about a call is stored before anything is done
 * with it, then handed to the call's actor, which processes it idempotently (the report is marked
 * processed in the transaction that acts on it). A failed attempt is logged (one line per attempt)
 * and retried with backoff by the retry loop of any process, forever, and is listed for the
 * operator (`GET /admin/v1/carrier_reports`). The mirror of the events outbox (DESIGN: "What
 * outside parties tell us lands in an inbox row first").
 */

/** How long one processing attempt may hold a report before another process may try it. */
const ATTEMPT_LEASE_SECONDS = 30;
/** Wait before the next attempt, by attempts made so far (the last repeats). */
const RETRY_SECONDS = [5, 15, 30, 60, 120, 300];
/** An in-process report that could not even be stored (database down) is tried again this often at most. */
const SPOOL_MAX_DELAY_MS = 5_000;

export type CarrierReport = { kind: 'status'; report: CarrierStatusReport } | { kind: 'recording'; report: RecordingReport } | { kind: 'amd'; report: AmdReport };

export const retryDelaySeconds = (attempts: number) => RETRY_SECONDS[Math.min(Math.max(attempts, 1), RETRY_SECONDS.length) - 1];

/** The key under which a report is stored once: a carrier sending the same report twice is one report. */
export function dedupeKey(r: CarrierReport): string {
  if (r.kind === 'recording') return `recording:${r.report.recordingId}`;
  // One verdict per call: a repeat (or a second, different one) is the first one.
  if (r.kind === 'amd') return `amd:${r.report.carrierCallId}`;
  return `status:${r.report.carrierCallId}:${r.report.status}:${r.report.sequence ?? ''}`;
}

export interface CarrierInbox {
  /**
   * Stores a report durably (throws if it cannot: the carrier's request then fails and is
   * answered 503), then makes the first processing attempt. True when it was processed now.
   */
  receive(r: CarrierReport, source?: CarrierReportRow['source']): Promise<boolean>;
  /** `receive` for reports that arrive in-process (the simulated carrier): kept in memory and stored as soon as the database answers. */
  receiveLocal(r: CarrierReport): void;
  /** One retry round: claims due reports and processes them. Returns how many were processed. */
  retryDue(limit?: number): Promise<number>;
  /** Processes the waiting machine verdicts of the calls dialler `owner` holds (their streams are in its process). */
  retryMachineVerdictsOf(owner: string): Promise<number>;
  /** Reports not processed yet, oldest first (the operator's list). */
  listPending(limit: number): Promise<CarrierReportRow[]>;
  /** Reports that arrived in-process and wait for the database. */
  readonly spooled: number;
  stop(): void;
}

export function createCarrierInbox(deps: Deps & { calls: () => EntityRegistry<CallMessage, CallReplies, any> }): CarrierInbox {
  const { pool, log } = deps;
  const repo = () => createCarrierReportRepository(pool);
  const spool: CarrierReport[] = [];
  let spoolTimer: NodeJS.Timeout | undefined;
  let spoolDelayMs = 250;
  let stopped = false;

  // Progress reports arriving in one turn of the event loop (a round's calls ring together) are
  // stored in one statement (tick-batch.ts); a failed batch stores each alone.
  type Progress = Parameters<ReturnType<typeof createCarrierReportRepository>['recordProgress']>[0];
  const recordProgress = tickBatch(
    (items: Progress[]) => repo().recordProgressMany(items, deps.clock.now()),
    (item) => repo().recordProgress(item, deps.clock.now()),
  );

  /** One attempt; a failure is recorded on the row (when the database lets us) and logged once. */
  async function attempt(row: Pick<CarrierReportRow, 'id' | 'call_id' | 'kind' | 'attempts'>): Promise<boolean> {
    try {
      const r = await deps.calls().ask(row.call_id, { type: 'carrier_report_received', reportId: row.id });
      return r.processed;
    } catch (err) {
      const retryIn = retryDelaySeconds(row.attempts);
      await repo()
        .recordFailure(row.id, retryIn, err instanceof Error ? err.message : String(err))
        .catch(() => {}); // the database is away too: the attempt's lease runs out and the retry loop takes it
      log.error(
        { err, call_id: row.call_id, report_id: row.id, report_kind: row.kind, attempt: row.attempts, retry_in_seconds: retryIn },
        'carrier report not processed; it is kept and retried',
      );
      return false;
    }
  }

  async function receive(r: CarrierReport, source: CarrierReportRow['source'] = 'callback'): Promise<boolean> {
    // A progress report is stored and acted on in one statement (it only moves the call's status),
    // rather than stored, then read, locked and marked through the call's actor: a repeat goes the
    // usual way, which answers it as its stored row says.
    if (r.kind === 'status' && !FINAL_CARRIER_STATUSES.includes(r.report.status)) {
      if (await recordProgress({ callId: r.report.callId, dedupeKey: dedupeKey(r), report: r.report, source })) return true;
    }
    const row = await repo().insert({ callId: r.report.callId, kind: r.kind, dedupeKey: dedupeKey(r), report: r.report, source }, ATTEMPT_LEASE_SECONDS);
    if (row.processed_at) return true; // a repeat of a report already acted on
    return attempt(row);
  }

  function scheduleSpool(): void {
    if (stopped || spoolTimer || spool.length === 0) return;
    spoolTimer = setTimeout(async () => {
      spoolTimer = undefined;
      while (spool.length > 0 && !stopped) {
        try {
          await receive(spool[0]);
        } catch (err) {
          spoolDelayMs = Math.min(spoolDelayMs * 2, SPOOL_MAX_DELAY_MS);
          log.debug({ err, waiting: spool.length, retry_in_ms: spoolDelayMs }, 'carrier reports still wait for the database');
          break;
        }
        spool.shift();
        spoolDelayMs = 250;
        if (spool.length === 0) log.info('carrier reports kept in memory while the database was away are stored');
      }
      scheduleSpool();
    }, spoolDelayMs);
  }

  return {
    receive,
    receiveLocal(r) {
      receive(r).catch((err) => {
        if (spool.length === 0) log.warn({ err, call_id: r.report.callId }, 'a carrier report could not be stored; it is kept in memory and stored when the database answers');
        spool.push(r);
        scheduleSpool();
      });
    },
    async retryDue(limit = 20) {
      const due = await repo().claimDue(limit, ATTEMPT_LEASE_SECONDS);
      // Reports of one call in the order they arrived; different calls side by side.
      const byCall = new Map<string, CarrierReportRow[]>();
      for (const row of due) byCall.set(row.call_id, [...(byCall.get(row.call_id) ?? []), row]);
      const counts = await Promise.all(
        [...byCall.values()].map(async (rows) => {
          let n = 0;
          for (const row of rows) if (await attempt(row)) n++;
          return n;
        }),
      );
      return counts.reduce((a, b) => a + b, 0);
    },
    async retryMachineVerdictsOf(owner) {
      let n = 0;
      for (const row of await repo().claimMachineVerdictsOf(owner, ATTEMPT_LEASE_SECONDS)) if (await attempt(row)) n++;
      return n;
    },
    listPending: (limit) => repo().listPending(limit),
    get spooled() {
      return spool.length;
    },
    stop() {
      stopped = true;
      clearTimeout(spoolTimer);
    },
  };
}
