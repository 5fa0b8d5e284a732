import type { Deps } from '../../runtime/deps.ts';
import { liveCarrierKind } from '../../runtime/config.ts';
import type { Mode } from '../../runtime/types.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Client, Queryable } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { recordEvent } from '../../db/events.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import { nextRenewal } from '../../money/rules/renewal.ts';
import type { MoneyWriter, RecurringCharge } from '../../money/writer.ts';
import { CarrierNumberError, type NumberCarrier } from '../../telephony/carrier.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { nationalFormat } from '../shared/phone.ts';
import { numberView } from './views.ts';

/**
 * What the parts of the numbers room share (orders, caller IDs, renewals, and the resource in
 * `numbers.ts`): taking a period's rent through the money writer, recording a number's events,
 * and giving a number back at the carrier. Each takes the transaction it works in.
 */

export interface NumbersDeps extends Pick<Deps, 'pool' | 'clock' | 'realClock' | 'log' | 'config'> {
  carriers: Record<Mode, NumberCarrier>;
  money: MoneyWriter;
  secrets: Pick<SecretBox, 'seal' | 'open'>;
}

/** Who asks: the key's account and mode, and the customer its `{id}` named. */
export interface NumberOwner {
  accountId: string;
  mode: Mode;
  customerId: string;
}

/** The monthly rent of each kind (spec: Pricing). */
export const PRICE: Record<NumberRow['kind'], number> = {
  rented: ITEM_PRICES.number_cents_per_month,
  caller_id: ITEM_PRICES.caller_id_cents_per_month,
};

const CAUSE: Record<NumberRow['kind'], 'number' | 'caller_id'> = { rented: 'number', caller_id: 'caller_id' };

/** How many rows a job takes at a time. */
export const BATCH = 100;

export type NumberTools = ReturnType<typeof createNumberTools>;

export function createNumberTools(deps: NumbersDeps) {
  const { log, config, carriers, money } = deps;

  /** Live numbers need a carrier: without one nothing is bought, verified or charged. */
  function requireCarrier(mode: Mode): void {
    if (mode === 'live' && !liveCarrierKind(config)) throw new Refusal('carrier_unavailable', 'No carrier is set up for live numbers yet; nothing was bought or charged.');
  }

  function rentDescription(row: Pick<NumberRow, 'kind' | 'e164'>, from: string, to: string): string {
    const what = row.kind === 'rented' ? 'Phone number' : 'Verified caller ID';
    return `${what} ${nationalFormat(row.e164)}, ${from} to ${to}`;
  }

  /** The rent of `row`'s period that starts on `periodStart`, as the money writer charges it; the period ends at the next renewal. */
  function periodCharge(row: NumberRow, periodStart: string, now: Date): RecurringCharge {
    const periodEnd = nextRenewal(periodStart, row.anchor_day ?? Number(periodStart.slice(8, 10)));
    return {
      accountId: row.account_id,
      mode: row.mode,
      customerId: row.customer_id,
      item: CAUSE[row.kind],
      itemId: row.id,
      amountCents: row.monthly_cents,
      periodStart,
      periodEnd,
      description: rentDescription(row, periodStart, periodEnd),
      now,
    };
  }

  /**
   * Charges the period of `row` that starts on `periodStart`; the period ends at the next
   * renewal. `charged` and `already_charged` both mean the period is paid.
   */
  async function chargePeriod(client: Client, row: NumberRow, periodStart: string, now: Date) {
    const charge = periodCharge(row, periodStart, now);
    const periodEnd = charge.periodEnd;
    const result = await money.chargeRecurring(client, charge);
    // awaiting_top_up: not paid, and a working automatic top-up was asked for: not now, no countdown.
    return { paid: result.outcome === 'charged' || result.outcome === 'already_charged', waiting: result.outcome === 'awaiting_top_up', periodEnd };
  }

  async function emit(db: Queryable, row: NumberRow, type: 'number.assigned' | 'number.payment_due' | 'number.released', now: Date) {
    await recordEvent(db, { accountId: row.account_id, mode: row.mode, type, data: numberView(row), now });
  }

  /** Removes a caller ID the carrier verified for a number no longer verifying here (logged if the carrier refuses). */
  async function removeStrayCallerId(row: NumberRow, carrierRef: string): Promise<void> {
    try {
      await carriers[row.mode].removeCallerId(carrierRef);
      log.warn({ number_id: row.id, carrier_caller_id: carrierRef, status: row.status }, 'caller id verified after it was released or failed here was removed at the carrier');
    } catch (err) {
      if (err instanceof CarrierNumberError && err.reason === 'not_found') return;
      log.error({ err, number_id: row.id, carrier_caller_id: carrierRef }, 'caller id verified after it was released or failed here could not be removed; remove it at the carrier by hand');
    }
  }

  /** Releases `row` at the carrier (inside its lock): a number the carrier no longer knows counts as released. */
  async function releaseAtCarrier(row: NumberRow): Promise<void> {
    if (!row.carrier_ref || (row.status !== 'active' && row.status !== 'payment_due')) return;
    const carrier = carriers[row.mode];
    try {
      if (row.kind === 'rented') await carrier.releaseNumber(row.carrier_ref);
      else await carrier.removeCallerId(row.carrier_ref);
    } catch (err) {
      if (err instanceof CarrierNumberError && err.reason === 'not_found') return;
      throw err;
    }
  }

  /** Marks `row` released (its lock held, the carrier done); `number.released` when it had been working. */
  async function markReleased(client: Client, row: NumberRow, now: Date): Promise<NumberRow> {
    const working = row.status === 'active' || row.status === 'payment_due';
    const released = await createNumberRepository(client).update(
      row.id,
      { status: 'released', released_at: now, renews_on: null, release_due_on: null, verification_code_sealed: null, verification_expires_at: null },
      now,
    );
    if (working) await emit(client, released, 'number.released', now);
    await refreshReadiness(client, { customerId: row.customer_id }, now);
    return released;
  }

  return { requireCarrier, periodCharge, chargePeriod, emit, removeStrayCallerId, releaseAtCarrier, markReleased };
}
