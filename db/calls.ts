import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export type CallStatus = 'queued' | 'dialing' | 'ringing' | 'in_progress' | 'completed' | 'cancelled' | 'expired' | 'blocked';
export const OPEN_CALL_STATUSES: readonly CallStatus[] = ['queued', 'dialing', 'ringing', 'in_progress'];

export interface TranscriptLine {
  role: 'agent' | 'callee';
  text: string;
  at: string;
}

export interface CallRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string;
  to_e164: string;
  to_country: string;
  phone_input: string;
  business_name: string | null;
  external_ref: string | null;
  status: CallStatus;
  outcome: string | null;
  dial_before: Date;
  next_attempt_at: Date;
  attempts: number;
  waiting_reason: string | null;
  /** Why it waits, for a person (migration 019); null when the code says it all. */
  waiting_detail: string | null;
  claimed_at: Date | null;
  claimed_by: string | null;
  carrier: string | null;
  carrier_call_id: string | null;
  from_e164: string | null;
  answered_by: string | null;
  dialed_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  summary: string | null;
  end_reason: string | null;
  appointment_id: string | null;
  transcript: TranscriptLine[];
  recording_id: string | null;
  recording_url: string | null;
  recording_seconds: number | null;
  /** Until when the dialling process (claimed_by) holds the running call; real time. */
  lease_expires_at: Date | null;
  /** call.completed waits for the recording until then (real time); null when nothing waits. */
  completion_event_due_at: Date | null;
  /** The consent the reseller holds for the called party (migration 015); 'none' when it sent none. */
  consent_type: 'requested_call' | 'prior_express_written' | 'prior_express' | 'existing_business_relationship' | 'none';
  consent_obtained_at: Date | null;
  consent_source: string | null;
  consent_evidence_ref: string | null;
  /** After this the consent no longer counts: the dialler ends the request `consent_expired`. */
  consent_expires_at: Date | null;
  /** The line type the request was admitted on (null for requests older than migration 015). */
  line_type: string | null;
  /** The request this call is an attempt of: its first attempt's id (migration 041; its own id for a first attempt). */
  request_id: string;
  /** Which attempt of its request this call is: 1, 2, … */
  attempt: number;
  /** On an ended attempt: when the request's next attempt was planned for; null when none is (or it was withdrawn). */
  retry_at: Date | null;
  /** Migration 043: 'inbound' for a call a person made to the customer's number (to_e164 the caller, from_e164 the number called). */
  direction: 'outbound' | 'inbound';
  /** What answered an inbound call (actors/call/inbound.ts); null for outbound calls. */
  inbound_action: 'forward' | 'agent' | 'message' | null;
  created_at: Date;
  updated_at: Date;
}

/** The consent carried with a request, as stored. */
export interface StoredConsent {
  type: CallRow['consent_type'];
  obtainedAt: Date | null;
  source: string | null;
  evidenceRef: string | null;
  expiresAt: Date | null;
}

/**
 * Every column of `calls`, in the table's order, for the named statements below. Named rather
 * than `*`: a named statement is parsed once per connection, and PostgreSQL refuses to run one
 * whose `*` would now yield another row shape ("cached plan must not change result type", after
 * a migration adds a column while a process keeps its connections). A column added by a
 * migration is added here too (test/integration/call-statements.test.ts checks the list).
 */
export const CALL_COLUMNS = [
  'id', 'seq', 'account_id', 'mode', 'customer_id', 'to_e164', 'to_country', 'phone_input', 'business_name', 'external_ref',
  'status', 'outcome', 'dial_before', 'next_attempt_at', 'attempts', 'waiting_reason', 'claimed_at', 'claimed_by', 'carrier',
  'carrier_call_id', 'from_e164', 'answered_by', 'dialed_at', 'answered_at', 'ended_at', 'duration_seconds', 'summary',
  'appointment_id', 'transcript', 'recording_id', 'recording_url', 'recording_seconds', 'created_at', 'updated_at', 'end_reason',
  'lease_expires_at', 'completion_event_due_at', 'consent_type', 'consent_obtained_at', 'consent_source', 'consent_evidence_ref',
  'consent_expires_at', 'line_type', 'waiting_detail', 'clock_claimed_at', 'request_id', 'attempt', 'retry_at', 'direction',
  'inbound_action',
] as const;
const CALL_COLUMNS_SQL = CALL_COLUMNS.join(', ');

const GET_CALL = prepared('call_by_id', `SELECT ${CALL_COLUMNS_SQL} FROM calls WHERE id = $1`);
/** The lock every change of a call takes first (a call's end, its reports, its jobs): named, as planning it on a table of sixteen indexes cost more than running it. */
const LOCK_CALL = prepared('call_lock', `SELECT ${CALL_COLUMNS_SQL} FROM calls WHERE id = $1 FOR NO KEY UPDATE`);

/**
 * `update`'s statement for one set of fields, named: the code writes a few dozen sets in all, and
 * an unnamed UPDATE of a call was planned again on every run (measured: about 150 µs of
 * PostgreSQL's CPU a call end). Names are short and per process (a statement is per connection).
 */
const UPDATE_CALL = new Map<string, ReturnType<typeof prepared>>();
function updateCallStatement(columns: readonly string[]) {
  const key = columns.join(',');
  let statement = UPDATE_CALL.get(key);
  if (!statement) {
    const sets = columns.map((k, i) => `${k} = $${i + 2}`).join(', ');
    statement = prepared(`call_update_${UPDATE_CALL.size + 1}`, `UPDATE calls SET ${sets} WHERE id = $1 RETURNING ${CALL_COLUMNS_SQL}`);
    UPDATE_CALL.set(key, statement);
  }
  return statement;
}

export function createCallRepository(db: Queryable) {
  return {
    /**
     * Queues a request unless one of the same customer is already open for this number or with
     * the same external_ref: then that one is returned and nothing is queued. A ref whose request
     * ended, or another customer's, queues a new request (docs/api.md, Calls). Two at once race on
     * the partial unique indexes calls_one_open_per_number and calls_one_open_per_ref: the second
     * waits for the first to commit, then finds its request.
     */
    async insertOrFindOpen(c: {
      accountId: string;
      mode: Mode;
      customerId: string;
      toE164: string;
      toCountry: string;
      phoneInput: string;
      businessName: string | null;
      externalRef: string | null;
      dialBefore: Date;
      consent?: StoredConsent;
      lineType?: string | null;
      now: Date;
      /** When it is first due: `now`, or its customer's test clock time (migration 028). */
      dueAt?: Date;
    }): Promise<{ row: CallRow; created: boolean }> {
      const openOfCustomer = async (): Promise<CallRow | null> => {
        const { rows } = await db.query(
          `SELECT * FROM calls WHERE customer_id = $1 AND status IN ('queued', 'dialing', 'ringing', 'in_progress') AND direction = 'outbound'
              AND (to_e164 = $2 OR external_ref = $3) ORDER BY seq LIMIT 1`,
          [c.customerId, c.toE164, c.externalRef],
        );
        return rows[0] ?? null;
      };
      // The open request that made the insert conflict can end before it is read back; the
      // insert is then tried again (each statement sees what committed before it).
      for (let attempt = 0; ; attempt++) {
        if (c.externalRef) {
          const open = await openOfCustomer();
          if (open) return { row: open, created: false };
        }
        const { rows } = await db.query(
          `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, business_name, external_ref,
                              dial_before, next_attempt_at, created_at, updated_at,
                              consent_type, consent_obtained_at, consent_source, consent_evidence_ref, consent_expires_at, line_type)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $17, $10, $10, $11, $12, $13, $14, $15, $16)
           ON CONFLICT DO NOTHING RETURNING *`,
          [
            c.accountId, c.mode, c.customerId, c.toE164, c.toCountry, c.phoneInput, c.businessName, c.externalRef, c.dialBefore, c.now,
            c.consent?.type ?? 'none', c.consent?.obtainedAt ?? null, c.consent?.source ?? null, c.consent?.evidenceRef ?? null, c.consent?.expiresAt ?? null,
            c.lineType ?? null,
            c.dueAt ?? c.now,
          ],
        );
        if (rows[0]) return { row: rows[0], created: true };
        const existing = await openOfCustomer();
        if (existing) return { row: existing, created: false };
        if (attempt >= 5) throw new Error('call request conflicted but no open request was found');
      }
    },

    async get(id: string): Promise<CallRow | null> {
      const { rows } = await db.query(GET_CALL([id]));
      return rows[0] ?? null;
    },

    async lock(id: string): Promise<CallRow | null> {
      const { rows } = await db.query(LOCK_CALL([id]));
      return rows[0] ?? null;
    },

    /** The distinct outcomes of every dialled call of `customerId` to `toE164` (no redial after a hang-up, consent.ts). */
    async earlierOutcomes(customerId: string, toE164: string): Promise<(string | null)[]> {
      const { rows } = await db.query(`SELECT DISTINCT outcome FROM calls WHERE customer_id = $1 AND to_e164 = $2 AND dialed_at IS NOT NULL AND direction = 'outbound'`, [customerId, toE164]);
      return rows.map((r) => r.outcome);
    },

    async findForAccount(accountId: string, mode: Mode, id: string): Promise<CallRow | null> {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
      const { rows } = await db.query(`SELECT * FROM calls WHERE id = $1 AND account_id = $2 AND mode = $3`, [id, accountId, mode]);
      return rows[0] ?? null;
    },

    /** Every attempt of the request `requestId`, first to last. */
    async attemptsOf(requestId: string): Promise<CallRow[]> {
      const { rows } = await db.query(`SELECT * FROM calls WHERE request_id = $1 ORDER BY attempt`, [requestId]);
      return rows;
    },

    /** The attempts of several requests, first to last within each (one statement for a page of requests). */
    async attemptsOfMany(requestIds: readonly string[]): Promise<CallRow[]> {
      const { rows } = await db.query(`SELECT * FROM calls WHERE request_id = ANY($1::uuid[]) ORDER BY request_id, attempt`, [requestIds]);
      return rows;
    },

    /**
     * The account's requests (their first attempts), newest first; `status` filters on the
     * request's status, which is its latest attempt's.
     */
    async listRequests(f: { accountId: string; mode: Mode; customerId: string | null; status: string | null; limit: number; beforeSeq: number | null }): Promise<CallRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM calls r WHERE account_id = $1 AND mode = $2 AND ($3::uuid IS NULL OR customer_id = $3) AND attempt = 1
            AND ($4::text IS NULL OR (SELECT l.status FROM calls l WHERE l.request_id = r.id ORDER BY l.attempt DESC LIMIT 1) = $4)
            AND ($6::bigint IS NULL OR seq < $6)
          ORDER BY seq DESC LIMIT $5`,
        [f.accountId, f.mode, f.customerId, f.status, f.limit, f.beforeSeq],
      );
      return rows;
    },

    /**
     * What a retry is decided on after the attempt `callId` ended (actors/call/retries.ts): the
     * customer's call settings, its test clock's time (null off any clock), whether the number is
     * on the account's do-not-call list or a national registry, and when each attempt of the
     * request so far was dialled, on the schedule's time (a test clock's claim time, if any).
     */
    async retryFacts(callId: string): Promise<{ call_settings: unknown; clock_now: Date | null; do_not_call: boolean; attempt_times: Date[] } | null> {
      const { rows } = await db.query(
        `SELECT cu.call_settings, tc.frozen_time AS clock_now,
                EXISTS (SELECT 1 FROM dnc_numbers d WHERE d.account_id = c.account_id AND d.e164 = c.to_e164)
                  OR EXISTS (SELECT 1 FROM dnc_registry g WHERE g.e164 = c.to_e164) AS do_not_call,
                ARRAY(SELECT COALESCE(a.clock_claimed_at, a.dialed_at) FROM calls a
                       WHERE a.request_id = c.request_id AND a.attempt <= c.attempt AND a.dialed_at IS NOT NULL ORDER BY a.attempt) AS attempt_times
           FROM calls c JOIN customers cu ON cu.id = c.customer_id LEFT JOIN test_clocks tc ON tc.id = cu.test_clock_id
          WHERE c.id = $1`,
        [callId],
      );
      return rows[0] ?? null;
    },

    /**
     * Queues the next attempt of the request whose attempt `previousId` just ended (its caller's
     * transaction): the same request, number, consent and deadline, due at `dueAt` and waiting
     * with `reason` until then. Null when another open request holds the number or the ref.
     */
    async insertNextAttempt(previousId: string, n: { dueAt: Date; now: Date; reason: string; detail: string }): Promise<CallRow | null> {
      const { rows } = await db.query(
        `INSERT INTO calls (request_id, attempt, account_id, mode, customer_id, to_e164, to_country, phone_input, business_name, external_ref,
                            dial_before, next_attempt_at, created_at, updated_at, waiting_reason, waiting_detail,
                            consent_type, consent_obtained_at, consent_source, consent_evidence_ref, consent_expires_at, line_type)
         SELECT p.request_id, p.attempt + 1, p.account_id, p.mode, p.customer_id, p.to_e164, p.to_country, p.phone_input, p.business_name, p.external_ref,
                p.dial_before, $2, $3, $3, $4, $5,
                p.consent_type, p.consent_obtained_at, p.consent_source, p.consent_evidence_ref, p.consent_expires_at, p.line_type
           FROM calls p WHERE p.id = $1
         ON CONFLICT DO NOTHING RETURNING *`,
        [previousId, n.dueAt, n.now, n.reason, n.detail],
      );
      return rows[0] ?? null;
    },

    async list(f: { accountId: string; mode: Mode; customerId: string | null; dialledOnly: boolean; status: string | null; limit: number; beforeSeq: number | null }): Promise<CallRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM calls WHERE account_id = $1 AND mode = $2 AND ($3::uuid IS NULL OR customer_id = $3)
            AND (NOT $4 OR dialed_at IS NOT NULL OR direction = 'inbound') AND ($5::text IS NULL OR status = $5) AND ($7::bigint IS NULL OR seq < $7)
          ORDER BY seq DESC LIMIT $6`,
        [f.accountId, f.mode, f.customerId, f.dialledOnly, f.status, f.limit, f.beforeSeq],
      );
      return rows;
    },

    /** Cancels a request only while it is still queued; null if the dialler has it (or it ended). */
    async cancelIfQueued(id: string, now: Date): Promise<CallRow | null> {
      const { rows } = await db.query(
        `UPDATE calls SET status = 'cancelled', outcome = 'cancelled', ended_at = $2, updated_at = $2 WHERE id = $1 AND status = 'queued' RETURNING *`,
        [id, now],
      );
      return rows[0] ?? null;
    },

    /**
     * Claims up to `limit` due requests for this process. Other diallers skip rows a claim holds
     * (SKIP LOCKED) and the status moves off `queued` in the same statement, so no request is
     * ever handed to two diallers.
     */
    async claimDue(now: Date, limit: number, claimer: string, leaseSeconds: number): Promise<CallRow[]> {
      const { rows } = await db.query(
        `UPDATE calls SET status = 'dialing', claimed_at = $1, claimed_by = $3, attempts = attempts + 1, updated_at = $1,
                lease_expires_at = now() + make_interval(secs => $4)
          WHERE id IN (SELECT id FROM calls WHERE status = 'queued' AND next_attempt_at <= $1
                          AND NOT EXISTS (SELECT 1 FROM customers cu WHERE cu.id = calls.customer_id AND cu.test_clock_id IS NOT NULL)
                        ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [now, limit, claimer, leaseSeconds],
      );
      return rows;
    },

    /**
     * `claimDue` for requests of customers on a test clock (migration 028): due when their clock's
     * frozen time reaches them; each comes back with that time (`clock_now`), which its admission
     * is decided on. The claim's own dates stay on the process clock.
     */
    async claimDueOnClocks(now: Date, limit: number, claimer: string, leaseSeconds: number): Promise<(CallRow & { clock_now: Date })[]> {
      const { rows } = await db.query(
        `UPDATE calls SET status = 'dialing', claimed_at = $1, claimed_by = $3, attempts = attempts + 1, updated_at = $1,
                lease_expires_at = now() + make_interval(secs => $4), clock_claimed_at = due.frozen_time
           FROM (SELECT c.id, tc.frozen_time FROM test_clocks tc
                   JOIN customers cu ON cu.test_clock_id = tc.id
                   JOIN calls c ON c.customer_id = cu.id
                  WHERE c.status = 'queued' AND c.next_attempt_at <= tc.frozen_time
                  ORDER BY c.next_attempt_at LIMIT $2 FOR UPDATE OF c SKIP LOCKED) AS due
          WHERE calls.id = due.id
          RETURNING calls.*, due.frozen_time AS clock_now`,
        [now, limit, claimer, leaseSeconds],
      );
      return rows;
    },

    /** Puts a claimed request back in the queue until `at`, saying why it waits (`detail`: in words, when there is more to say). */
    async requeue(id: string, at: Date, reason: string, now: Date, detail: string | null = null): Promise<void> {
      await db.query(
        `UPDATE calls SET status = 'queued', next_attempt_at = $2, waiting_reason = $3, waiting_detail = $5, claimed_at = NULL, claimed_by = NULL,
                lease_expires_at = NULL, updated_at = $4
          WHERE id = $1 AND status = 'dialing' AND dialed_at IS NULL`,
        [id, at, reason, now, detail],
      );
    },

    async update(id: string, fields: Partial<CallRow>): Promise<CallRow> {
      const entries = Object.entries(fields).map(([k, v]) => [k, k === 'transcript' ? JSON.stringify(v) : v] as const);
      const { rows } = await db.query(updateCallStatement(entries.map(([k]) => k))([id, ...entries.map(([, v]) => v)]));
      return rows[0];
    },

    /** `update` without reading the row back (`RETURNING *` of the wide calls row): for a writer that needs nothing of it. */
    async set(id: string, fields: Partial<CallRow>): Promise<void> {
      const entries = Object.entries(fields).map(([k, v]) => [k, k === 'transcript' ? JSON.stringify(v) : v] as const);
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      await db.query(`UPDATE calls SET ${sets} WHERE id = $1`, [id, ...entries.map(([, v]) => v)]);
    },

    /** The dials of many calls recorded in one statement (each as `set` with these fields would). */
    async recordDials(dials: readonly { id: string; carrier: string; carrier_call_id: string; from_e164: string; dialed_at: Date }[]): Promise<void> {
      await db.query(
        `UPDATE calls c SET carrier = v.carrier, carrier_call_id = v.carrier_call_id, from_e164 = v.from_e164, dialed_at = v.dialed_at, updated_at = v.dialed_at
           FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, carrier text, carrier_call_id text, from_e164 text, dialed_at timestamptz)
          WHERE c.id = v.id`,
        [JSON.stringify(dials)],
      );
    },

    async appendTranscript(id: string, line: TranscriptLine): Promise<void> {
      await db.query(`UPDATE calls SET transcript = transcript || $2::jsonb WHERE id = $1`, [id, JSON.stringify([line])]);
    },

    /**
     * Requests never dialled before their deadline become `expired` (they stay in the list). One of
     * a customer on a test clock is ended by its admission, when its clock has passed the deadline.
     */
    async expireOverdue(now: Date): Promise<CallRow[]> {
      const { rows } = await db.query(
        `UPDATE calls SET status = 'expired', outcome = 'expired', ended_at = $1, updated_at = $1
          WHERE id IN (SELECT id FROM calls WHERE status = 'queued' AND dial_before <= $1
                          AND NOT EXISTS (SELECT 1 FROM customers cu WHERE cu.id = calls.customer_id AND cu.test_clock_id IS NOT NULL)
                          FOR UPDATE SKIP LOCKED) RETURNING *`,
        [now],
      );
      return rows;
    },

    /**
     * Calls claimed or started long ago and never finished, older than `before`; a call with a
     * status or recording report still waiting in the inbox is not stale (its outcome is on its
     * way). A machine verdict waiting there says nothing of the end: it is left for the process
     * holding the call's stream, which may be the one that died.
     */
    async staleRunning(before: Date, limit: number): Promise<CallRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM calls c WHERE status IN ('dialing', 'ringing', 'in_progress') AND claimed_at <= $1
            AND NOT EXISTS (SELECT 1 FROM carrier_reports r WHERE r.call_id = c.id AND r.processed_at IS NULL AND r.kind <> 'amd')
          ORDER BY claimed_at LIMIT $2`,
        [before, limit],
      );
      return rows;
    },

    /**
     * Makes queued requests that wait for one of `reasons` due now (what they waited on changed);
     * only an account's requests, of one mode and optionally one customer. Returns how many.
     */
    async wakeWaiting(w: { accountId: string; mode?: Mode; customerId?: string; reasons: readonly string[]; now: Date }): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE calls SET next_attempt_at = w.due
           FROM (SELECT c.id, COALESCE(tc.frozen_time, $5) AS due FROM calls c
                   JOIN customers cu ON cu.id = c.customer_id LEFT JOIN test_clocks tc ON tc.id = cu.test_clock_id
                  WHERE c.account_id = $1 AND c.status = 'queued' AND c.waiting_reason = ANY($4::text[])
                    AND ($2::text IS NULL OR c.mode = $2) AND ($3::uuid IS NULL OR c.customer_id = $3)) AS w
          WHERE calls.id = w.id AND calls.status = 'queued' AND calls.next_attempt_at > w.due`,
        [w.accountId, w.mode ?? null, w.customerId ?? null, w.reasons, w.now],
      );
      return rowCount ?? 0;
    },

    /**
     * Wakes every account's requests waiting for `reasons` (an operator lifting a switch that
     * held requests across accounts, such as an emergency closure): due at `now`, so the dialler
     * asks their gates again.
     */
    async wakeWaitingEverywhere(reasons: readonly string[], now: Date): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE calls SET next_attempt_at = w.due
           FROM (SELECT c.id, COALESCE(tc.frozen_time, $2) AS due FROM calls c
                   JOIN customers cu ON cu.id = c.customer_id LEFT JOIN test_clocks tc ON tc.id = cu.test_clock_id
                  WHERE c.status = 'queued' AND c.waiting_reason = ANY($1::text[])) AS w
          WHERE calls.id = w.id AND calls.status = 'queued' AND calls.next_attempt_at > w.due`,
        [reasons, now],
      );
      return rowCount ?? 0;
    },

    // — leases (real time: the database's clock) —

    /** Renews the leases of the running calls `owner` holds; returns their ids. */
    async renewLeases(owner: string, leaseSeconds: number): Promise<string[]> {
      const { rows } = await db.query(
        `UPDATE calls SET lease_expires_at = now() + make_interval(secs => $2)
          WHERE claimed_by = $1 AND status IN ('dialing', 'ringing', 'in_progress') RETURNING id`,
        [owner, leaseSeconds],
      );
      return rows.map((r) => r.id);
    },

    /**
     * Takes over running calls whose owner stopped renewing their lease: they become `owner`'s,
     * leased for `leaseSeconds`, and no other process takes them meanwhile.
     */
    async takeOverOrphans(owner: string, leaseSeconds: number, limit: number): Promise<(CallRow & { previous_owner: string | null; previous_lease_expired_at: Date })[]> {
      const { rows } = await db.query(
        `UPDATE calls c SET claimed_by = $1, lease_expires_at = now() + make_interval(secs => $2)
           FROM (SELECT id, claimed_by AS previous_owner, lease_expires_at AS previous_lease_expired_at FROM calls
                  WHERE status IN ('dialing', 'ringing', 'in_progress') AND lease_expires_at < now()
                  ORDER BY lease_expires_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS orphan
          WHERE c.id = orphan.id
          RETURNING c.*, orphan.previous_owner, orphan.previous_lease_expired_at`,
        [owner, leaseSeconds, limit],
      );
      return rows;
    },

    /**
     * A dialler that stops hands its running calls over: their lease is released at once, marked
     * as handed over (lease_expires_at = the epoch) so another dialler takes them without waiting
     * for the lease to run out (`takeOverHandedOver`). The calls themselves go on.
     */
    async handOver(owner: string): Promise<CallRow[]> {
      const { rows } = await db.query(
        `UPDATE calls SET lease_expires_at = 'epoch'
          WHERE claimed_by = $1 AND status IN ('dialing', 'ringing', 'in_progress') RETURNING *`,
        [owner],
      );
      return rows;
    },

    /** Takes over running calls another dialler handed over (`handOver`); never `owner`'s own. */
    async takeOverHandedOver(owner: string, leaseSeconds: number, limit: number): Promise<(CallRow & { handed_over_by: string | null })[]> {
      const { rows } = await db.query(
        `WITH handed AS (SELECT id, claimed_by AS handed_over_by FROM calls
                          WHERE status IN ('dialing', 'ringing', 'in_progress') AND lease_expires_at = 'epoch' AND claimed_by IS DISTINCT FROM $1
                          ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
         UPDATE calls SET claimed_by = $1, lease_expires_at = now() + make_interval(secs => $2)
           FROM handed WHERE calls.id = handed.id
         RETURNING calls.*, handed.handed_over_by`,
        [owner, leaseSeconds, limit],
      );
      return rows;
    },

    /** Running calls `owner` holds. */
    async runningOf(owner: string): Promise<CallRow[]> {
      const { rows } = await db.query(`SELECT * FROM calls WHERE claimed_by = $1 AND status IN ('dialing', 'ringing', 'in_progress')`, [owner]);
      return rows;
    },

    // — call.completed waiting for a recording —

    /** The finished call's `call.completed` waits for its recording, `seconds` at the most. */
    async awaitRecording(id: string, seconds: number): Promise<void> {
      await db.query(`UPDATE calls SET completion_event_due_at = now() + make_interval(secs => $2) WHERE id = $1`, [id, seconds]);
    },

    /** Locks finished calls whose recording did not come in time and clears their wait (caller's transaction). */
    async takeOverdueCompletions(limit: number): Promise<CallRow[]> {
      const { rows } = await db.query(
        `UPDATE calls SET completion_event_due_at = NULL
          WHERE id IN (SELECT id FROM calls WHERE completion_event_due_at <= now() ORDER BY completion_event_due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [limit],
      );
      return rows;
    },

    /** The do-not-call entry this call created (the callee asked), if any. */
    async requestedDoNotCall(callId: string): Promise<boolean> {
      const { rowCount } = await db.query(`SELECT 1 FROM dnc_numbers WHERE call_id = $1`, [callId]);
      return (rowCount ?? 0) > 0;
    },

    /** Calls of one customer in a period, for the assistant's facts. */
    async forCustomerSince(customerId: string, since: Date): Promise<Pick<CallRow, 'status' | 'outcome' | 'dialed_at' | 'duration_seconds' | 'appointment_id'>[]> {
      // Only what the figures need: never transcripts or anything a call said.
      const { rows } = await db.query(
        `SELECT status, outcome, dialed_at, duration_seconds, appointment_id FROM calls WHERE customer_id = $1 AND created_at >= $2 AND direction = 'outbound' ORDER BY seq`,
        [customerId, since],
      );
      return rows;
    },
  };
}
