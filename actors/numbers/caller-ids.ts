import crypto from 'node:crypto';
import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction, type Client } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { isUuid, type CustomerRow } from '../../db/customers.ts';
import { spendableCents } from '../../money/balance-view.ts';
import { dayOf, releaseDueOn } from '../../money/rules/renewal.ts';
import type { CallerIdValidationReport } from '../../telephony/carrier.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { numberView, type NumberView } from './views.ts';
import { callerIdNumber, verificationLimitRefusal } from './caller-id-rules.ts';
import { BATCH, PRICE, type NumbersDeps, type NumberTools } from './tools.ts';

/**
 * Caller IDs: the customer's own number, verified by a call from the carrier (the person types
 * the code). Starting a verification (what may be one, and how many may run), its outcome as the
 * carrier reports it (or as the carrier answers once it expired), and the first month's rent
 * taken when it succeeds.
 */

/** How long a caller ID's verification may take before the carrier is asked and, failing that, it fails. */
export const VERIFICATION_MINUTES = 10;
/** How long a verification report waits for its number's row to be committed, and how often it looks. */
const REPORT_WAIT_MS = 5_000;
const REPORT_POLL_MS = 100;

export type CallerIds = ReturnType<typeof createCallerIds>;

export function createCallerIds(deps: NumbersDeps, tools: NumberTools) {
  const { pool, clock, log, config, carriers, secrets } = deps;
  const { requireCarrier, chargePeriod, emit, removeStrayCallerId } = tools;

  /** Refuses `e164` as a caller ID while one of it verifies or works, whoever's it is. */
  async function refuseHeldCallerId(repo: ReturnType<typeof createNumberRepository>, customer: CustomerRow, e164: string): Promise<void> {
    const holder = await repo.callerIdHolder(customer.mode, e164);
    if (!holder) return;
    if (holder.customer_id === customer.id) throw new Refusal('number_already_added');
    if (holder.status === 'verifying') throw new Refusal('verification_in_progress');
    throw new Refusal('caller_id_in_use');
  }

  /**
   * Starts a caller ID's verification inside `client`'s transaction; the carrier calls the number.
   * Only a landline or mobile number without an extension; one verifying or working caller ID of
   * a number per mode across every account; and bounded verifications per customer, per account
   * and per day (caller-id-rules.ts), since each makes the carrier call someone.
   */
  async function startCallerId(client: Client, customer: CustomerRow, phoneNumber: string | undefined, now: Date): Promise<{ row: NumberRow; code: string }> {
    requireCarrier(customer.mode);
    if (!phoneNumber) throw new Refusal('parameter_missing', 'phone_number is required for a caller_id.');
    const parsed = callerIdNumber(phoneNumber, customer.country);
    if (!parsed.ok) throw new Refusal(parsed.code, parsed.message);
    const repo = createNumberRepository(client);
    await refuseHeldCallerId(repo, customer, parsed.e164);
    await repo.lockVerificationStarts(customer.account_id, customer.mode);
    const dayStart = new Date(`${dayOf(now)}T00:00:00Z`);
    const limited = verificationLimitRefusal(await repo.verificationCounts(customer.account_id, customer.mode, customer.id, now, dayStart));
    if (limited) throw new Refusal(limited.code, limited.message);
    const price = PRICE.caller_id;
    if ((await spendableCents(client, customer.account_id, customer.mode)) < price) {
      throw new Refusal('insufficient_balance', `The balance cannot cover the caller ID's first month (${price} cents); nothing was started or charged.`);
    }
    const id = crypto.randomUUID();
    const expiresAt = new Date(now.getTime() + VERIFICATION_MINUTES * 60_000);
    let row: NumberRow;
    try {
      await client.query('SAVEPOINT caller_id');
      row = await repo.insert({
        id,
        account_id: customer.account_id,
        mode: customer.mode,
        customer_id: customer.id,
        e164: parsed.e164,
        country: parsed.country,
        kind: 'caller_id',
        status: 'verifying',
        carrier_ref: null,
        monthly_cents: price,
        anchor_day: null,
        renews_on: null,
        verification_code_sealed: null,
        verification_expires_at: expiresAt,
        now,
      });
      await client.query('RELEASE SAVEPOINT caller_id');
    } catch (err) {
      if ((err as { constraint?: string }).constraint === 'phone_numbers_one_caller_id') {
        await client.query('ROLLBACK TO SAVEPOINT caller_id');
        // Another order of the number committed meanwhile: whose it is decides the answer.
        await refuseHeldCallerId(repo, customer, parsed.e164);
        throw new Refusal('verification_in_progress');
      }
      throw err;
    }
    const started = await carriers[customer.mode].startCallerIdValidation({
      e164: parsed.e164,
      friendlyName: (customer.brand_name ?? customer.name).slice(0, 64),
      statusCallbackUrl: `${config.publicUrl}/telephony/twilio/caller-id?number_id=${id}`,
    });
    row = await repo.update(id, { verification_code_sealed: secrets.seal(started.validationCode) }, now);
    return { row, code: started.validationCode };
  }

  /**
   * A caller ID's verification came out (the carrier's callback, the test-mode carrier, or the
   * carrier asked after expiry): verified takes the first month and makes it active (or starts
   * the countdown when the balance cannot cover it); failed ends it. A report for a number no
   * longer verifying changes nothing.
   */
  async function settleVerification(numberId: string, outcome: { verified: true; carrierRef: string } | { verified: false; reason: string }): Promise<NumberView | null> {
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      const repo = createNumberRepository(client);
      let row = await repo.lock(numberId);
      if (!row || row.status !== 'verifying') {
        // Verified at the carrier after it was released or had failed here: that caller ID is
        // nobody's, and while it stays there the number cannot be added again (caller_id_in_use).
        if (row && outcome.verified && (row.status === 'released' || row.status === 'failed')) await removeStrayCallerId(row, outcome.carrierRef);
        return row ? numberView(row) : null;
      }
      if (!outcome.verified) {
        row = await repo.update(row.id, { status: 'failed', failure_reason: outcome.reason, failed_at: now, verification_code_sealed: null }, now);
        log.info({ number_id: row.id, reason: outcome.reason }, 'caller id verification failed');
        return numberView(row);
      }
      const today = dayOf(now);
      row = await repo.update(row.id, { carrier_ref: outcome.carrierRef, anchor_day: Number(today.slice(8, 10)), verification_code_sealed: null, verification_expires_at: null }, now);
      const { paid, periodEnd } = await chargePeriod(client, row, today, now);
      row = paid
        ? await repo.update(row.id, { status: 'active', renews_on: periodEnd }, now)
        : await repo.update(row.id, { status: 'payment_due', renews_on: today, release_due_on: releaseDueOn(today), notice_sent_for: today }, now);
      await emit(client, row, 'number.assigned', now);
      if (!paid) await emit(client, row, 'number.payment_due', now);
      await refreshReadiness(client, { customerId: row.customer_id }, now);
      return numberView(row);
    });
  }

  return {
    start: startCallerId,

    /** The carrier's report of a caller ID verification (signed callback, or the test-mode carrier). */
    async verificationReported(numberId: string, report: CallerIdValidationReport): Promise<NumberView | null> {
      if (!isUuid(numberId)) return null;
      // The carrier is asked inside the transaction that records the number, so a quick outcome
      // can arrive before that commits: wait for the row a few seconds (the carrier waits 15 s for
      // an answer) rather than drop the report and leave the number to its expiry.
      let row = await createNumberRepository(pool).getById(numberId);
      for (let waited = 0; !row && waited < REPORT_WAIT_MS; waited += REPORT_POLL_MS) {
        await new Promise((r) => setTimeout(r, REPORT_POLL_MS));
        row = await createNumberRepository(pool).getById(numberId);
      }
      if (!row || row.kind !== 'caller_id' || row.e164 !== report.e164) return null;
      return settleVerification(
        numberId,
        report.status === 'verified' && report.carrierCallerIdId
          ? { verified: true, carrierRef: report.carrierCallerIdId }
          : { verified: false, reason: 'verification_failed' },
      );
    },

    /** Caller IDs whose verification expired: the carrier is asked; verified there counts, else it failed. */
    async expireVerifications(now: Date): Promise<number> {
      let settled = 0;
      for (const id of await createNumberRepository(pool).verificationsExpired(now, BATCH)) {
        const row = await createNumberRepository(pool).getById(id);
        if (!row || row.status !== 'verifying') continue;
        let status;
        try {
          status = await carriers[row.mode].callerIdStatus(row.e164);
        } catch (err) {
          log.warn({ err, number_id: id }, 'the carrier could not be asked about an expired caller id verification; asked again next run');
          continue;
        }
        await settleVerification(id, status.verified ? { verified: true, carrierRef: status.carrierCallerIdId } : { verified: false, reason: 'verification_expired' });
        settled++;
      }
      return settled;
    },
  };
}
