import type { Queryable } from './pool.ts';
import type { CallRow } from './calls.ts';
import type { NumberRow } from './numbers.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * Calls people make to a customer's rented number (migration 043, actors/call/inbound.ts). An
 * inbound call is a `calls` row with direction 'inbound': to_e164 the caller, from_e164 the
 * number called. It starts in_progress, so the dialler's queue never holds it.
 */
export function createInboundCallRepository(db: Queryable) {
  return {
    /**
     * The working rented number `e164`, whoever's it is: the live one first (the carrier's
     * webhooks come from the live carrier; a test number of the same digits is a simulation).
     */
    async rentedNumber(e164: string): Promise<NumberRow | null> {
      const { rows } = await db.query(
        `SELECT * FROM phone_numbers WHERE e164 = $1 AND kind = 'rented' AND status IN ('active', 'payment_due')
          ORDER BY mode = 'live' DESC, seq LIMIT 1`,
        [e164],
      );
      return rows[0] ?? null;
    },

    /** The call the carrier knows as `carrierCallId`, if it is an inbound one. */
    async byCarrierCallId(carrierCallId: string): Promise<CallRow | null> {
      const { rows } = await db.query(`SELECT * FROM calls WHERE carrier_call_id = $1 AND direction = 'inbound'`, [carrierCallId]);
      return rows[0] ?? null;
    },

    /** The inbound call `id` (null for an outbound call or none). */
    async get(id: string): Promise<CallRow | null> {
      const { rows } = await db.query(`SELECT * FROM calls WHERE id = $1 AND direction = 'inbound'`, [id]);
      return rows[0] ?? null;
    },

    /**
     * Records an inbound call once per carrier call: a repeat of the webhook (the carrier retries)
     * finds the call it recorded (`created: false`). `claimed_at` is its start, so a call whose
     * final report never comes is closed by the stale-call job (call-jobs.ts finishStaleCalls).
     */
    async insert(c: {
      accountId: string;
      mode: Mode;
      customerId: string;
      caller: string;
      called: string;
      country: string;
      carrier: string;
      carrierCallId: string;
      action: 'forward' | 'agent' | 'message';
      now: Date;
    }): Promise<{ row: CallRow; created: boolean }> {
      const { rows } = await db.query(
        `INSERT INTO calls (account_id, mode, customer_id, direction, inbound_action, to_e164, to_country, phone_input, from_e164,
                            carrier, carrier_call_id, status, answered_at, claimed_at, dial_before, next_attempt_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'inbound', $4, $5, $6, $5, $7, $8, $9, 'in_progress', $10, $10, $10, $10, $10, $10)
         ON CONFLICT (carrier_call_id) WHERE carrier_call_id IS NOT NULL DO NOTHING RETURNING *`,
        [c.accountId, c.mode, c.customerId, c.action, c.caller, c.country, c.called, c.carrier, c.carrierCallId, c.now],
      );
      if (rows[0]) return { row: rows[0], created: true };
      const found = await this.byCarrierCallId(c.carrierCallId);
      if (!found) throw new Error(`carrier call ${c.carrierCallId} is an outbound call`);
      return { row: found, created: false };
    },

    /**
     * The call took a hold (forwarded or answered by the agent): it is billed at its end like a
     * dialled call. With an `owner` (a process whose call keeper runs) it is leased to it, so the
     * keeper accounts for it (a lost final report is asked of the carrier); without one, it is
     * never leased (no keeper would renew it, and another would take it over and hang it up).
     */
    async markHeld(id: string, owner: string | null, leaseSeconds: number, now: Date): Promise<CallRow> {
      const { rows } = await db.query(
        `UPDATE calls SET dialed_at = $2, claimed_at = $2, claimed_by = $3,
                lease_expires_at = CASE WHEN $3::text IS NULL THEN NULL ELSE now() + make_interval(secs => $4) END, updated_at = $2
          WHERE id = $1 RETURNING *`,
        [id, now, owner, leaseSeconds],
      );
      return rows[0];
    },

    /** What answers the call changed (a refused hold, a forward nobody answered). */
    async setAction(id: string, action: 'forward' | 'agent' | 'message', endReason: string | null, now: Date): Promise<void> {
      await db.query(`UPDATE calls SET inbound_action = $2, end_reason = COALESCE(end_reason, $3), updated_at = $4 WHERE id = $1`, [id, action, endReason, now]);
    },

    /** How the forward to the customer's phone went (Twilio DialCallStatus), kept for the outcome. */
    async setEndReason(id: string, endReason: string, now: Date): Promise<void> {
      await db.query(`UPDATE calls SET end_reason = $2, updated_at = $3 WHERE id = $1`, [id, endReason, now]);
    },
  };
}
