import type { Mode } from '../../runtime/types.ts';
import { Refusal, isRefusal } from '../../runtime/refusal.ts';
import { withTransaction, type Client, type Queryable } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { spendableCents } from '../../money/balance-view.ts';
import { dayOf } from '../../money/rules/renewal.ts';
import { CarrierNumberError } from '../../telephony/carrier.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import type { NumberOrderBlocker } from '../customer/provisioning.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { numberView, type NumberView } from './views.ts';
import { areaCodeRefusal } from './area-code.ts';
import { BATCH, PRICE, type NumberOwner, type NumbersDeps, type NumberTools } from './tools.ts';
import type { CallerIds } from './caller-ids.ts';

/**
 * Orders of numbers: renting one in the customer's country (searched, the area code preferred;
 * bought, recorded and its first month charged in one transaction), the order endpoint that
 * rents or starts a caller ID's verification, and the provisioning number step. The carrier is
 * asked inside the transaction, and a number bought in a transaction that then rolls back is
 * given back at once.
 */

/** Candidates tried when a number sells out between the search and the purchase. */
const PURCHASE_TRIES = 3;
/** A failed try of the provisioning number step is tried again after this long (or at the next request). */
export const NUMBER_ORDER_RETRY_MS = 60 * 60_000;

export interface NumberOrder {
  kind: 'rented' | 'caller_id';
  phoneNumber?: string;
  areaCode?: string;
  idempotency?: IdempotencyClaim;
}

/** What the provisioning number step did. */
export type NumberStepOutcome = { ok: true; number: NumberView | null } | { ok: false; code: NumberOrderBlocker; message: string };

export function createNumberOrders(deps: NumbersDeps, tools: NumberTools, callerIds: Pick<CallerIds, 'start'>) {
  const { pool, clock, log, carriers } = deps;
  const { requireCarrier, chargePeriod, emit } = tools;

  async function lockCustomer(db: Queryable, owner: NumberOwner): Promise<CustomerRow> {
    const customer = await createCustomerRepository(db).lockOwned(owner.customerId, owner.accountId, owner.mode);
    if (!customer) throw new Refusal('customer_not_found');
    return customer;
  }

  /** A carrier refusal as the API's answer to an order. */
  function orderRefusal(err: unknown): never {
    if (isRefusal(err)) throw err;
    if (err instanceof CarrierNumberError) {
      switch (err.reason) {
        case 'regulatory_bundle_required':
          throw new Refusal('no_number_available', "The carrier requires a regulatory bundle for numbers in this country, which the service has not filed yet; nothing was charged.");
        case 'address_required':
          throw new Refusal('no_number_available', "The carrier requires a local address for numbers in this country, which the service has not filed yet; nothing was charged.");
        case 'no_stock':
          throw new Refusal('no_number_available');
        case 'already_verified':
          throw new Refusal('caller_id_in_use');
        default:
          throw new Refusal('carrier_unavailable');
      }
    }
    throw err;
  }

  /**
   * Gives back what the carrier sold (`bought`) to a change that did not commit: every number not
   * recorded as a number here is released at the carrier (logged if the carrier refuses).
   */
  async function giveBack(mode: Mode, bought: string[]): Promise<void> {
    const kept = await createNumberRepository(pool).keptCarrierRefs(bought);
    for (const carrierNumberId of bought.filter((b) => !kept.has(b))) {
      try {
        await carriers[mode].releaseNumber(carrierNumberId);
        log.warn({ carrier_number_id: carrierNumberId, mode }, 'number bought for a change that did not commit was released');
      } catch (err) {
        log.error({ err, carrier_number_id: carrierNumberId, mode }, 'number bought for a change that did not commit could not be released; release it at the carrier by hand');
      }
    }
  }

  /**
   * Rents a number in the customer's country inside `client`'s transaction: searched (the area
   * code preferred), checked against the balance, bought, recorded and its first month charged.
   * `bought` collects what the carrier sold, for `giveBack` should the transaction not commit.
   */
  async function rentIn(client: Client, customer: CustomerRow, areaCode: string | undefined, bought: string[], now: Date): Promise<NumberRow> {
    const mode = customer.mode;
    requireCarrier(mode);
    if (!customer.country) throw new Refusal('country_required');
    const wrongAreaCode = areaCode === undefined ? null : areaCodeRefusal(customer.country, areaCode);
    if (wrongAreaCode) throw new Refusal('invalid_parameter', wrongAreaCode);
    const price = PRICE.rented;
    if ((await spendableCents(client, customer.account_id, mode)) < price) {
      throw new Refusal('insufficient_balance', `The balance cannot cover the first month's rent (${price} cents); nothing was bought or charged.`);
    }
    const carrier = carriers[mode];
    let offered = await carrier.searchNumbers({ country: customer.country, areaCode, limit: PURCHASE_TRIES });
    if (offered.length === 0 && areaCode) offered = await carrier.searchNumbers({ country: customer.country, limit: PURCHASE_TRIES });
    if (offered.length === 0) throw new Refusal('no_number_available');
    let purchase: { carrierNumberId: string; e164: string } | undefined;
    for (const candidate of offered) {
      try {
        // People call back: the number answers through the inbound webhook (actors/call/inbound.ts).
        purchase = await carrier.buyNumber({
          e164: candidate.e164,
          voiceUrl: `${deps.config.publicUrl}/telephony/twilio/inbound`,
          statusCallbackUrl: `${deps.config.publicUrl}/telephony/twilio/inbound/status`,
        });
        break;
      } catch (err) {
        // Sold to someone else between the search and now: the next candidate.
        if (err instanceof CarrierNumberError && err.reason === 'no_stock') continue;
        throw err;
      }
    }
    if (!purchase) throw new Refusal('no_number_available');
    bought.push(purchase.carrierNumberId);
    const today = dayOf(now);
    const anchorDay = Number(today.slice(8, 10));
    const repo = createNumberRepository(client);
    let row = await repo.insert({
      account_id: customer.account_id,
      mode,
      customer_id: customer.id,
      e164: purchase.e164,
      country: customer.country,
      kind: 'rented',
      status: 'active',
      carrier_ref: purchase.carrierNumberId,
      monthly_cents: price,
      anchor_day: anchorDay,
      renews_on: null,
      verification_code_sealed: null,
      verification_expires_at: null,
      now,
    });
    const { paid, periodEnd } = await chargePeriod(client, row, today, now);
    // The balance was checked above under no lock; a call's end may have spent it since.
    if (!paid) throw new Refusal('insufficient_balance', `The balance cannot cover the first month's rent (${price} cents); nothing was bought or charged.`);
    row = await repo.update(row.id, { renews_on: periodEnd }, now);
    await emit(client, row, 'number.assigned', now);
    await refreshReadiness(client, { customerId: customer.id }, now);
    return row;
  }

  /**
   * The provisioning number step (customer actor): a customer with no working number in its
   * country gets one rented (test customers from the fictional ranges). Locks the customer's row
   * first, so two steps at once rent one number. A try that cannot rent is recorded as the
   * step's blocker (`number_orders`) and answered, never thrown.
   */
  async function provisionNumber(customerId: string): Promise<NumberStepOutcome> {
    const now = clock.now();
    const bought: string[] = [];
    let mode: Mode = 'test';
    try {
      return await withTransaction(pool, async (client) => {
        const customer = await createCustomerRepository(client).lock(customerId);
        if (!customer) throw new Refusal('customer_not_found');
        mode = customer.mode;
        const repo = createNumberRepository(client);
        if (await repo.hasWorkingNumber(customer.id, customer.country)) return { ok: true as const, number: null };
        await client.query('SAVEPOINT number_step');
        try {
          const row = await rentIn(client, customer, undefined, bought, now);
          await repo.recordOrder(customer.id, null, now);
          return { ok: true as const, number: numberView(row) };
        } catch (err) {
          const blocker = stepBlocker(err);
          if (!blocker) throw err;
          // What the failed try wrote goes; what it bought goes back after commit.
          await client.query('ROLLBACK TO SAVEPOINT number_step');
          await repo.recordOrder(customer.id, blocker, now);
          await refreshReadiness(client, { customerId: customer.id }, now);
          log.warn({ customer_id: customer.id, blocker: blocker.code }, 'the number step could not rent a number');
          return { ok: false as const, ...blocker };
        }
      });
    } finally {
      // A try that rolled back (to its savepoint or whole) keeps nothing it bought.
      await giveBack(mode, bought);
    }
  }

  return {
    /** POST /v1/customers/{id}/numbers: rents a number, or starts verifying a caller ID. */
    async order(owner: NumberOwner, order: NumberOrder): Promise<Written<NumberView>> {
      // A field of the other kind is a mistake to say, not to ignore (renting when a caller ID was meant).
      if (order.kind === 'rented' && order.phoneNumber !== undefined) {
        throw new Refusal('invalid_parameter', "phone_number is only for kind caller_id; a rented number is chosen by the service (send area_code to prefer one).");
      }
      if (order.kind === 'caller_id' && order.areaCode !== undefined) throw new Refusal('invalid_parameter', 'area_code is only for kind rented.');
      const now = clock.now();
      const bought: string[] = [];
      let code: string | undefined;
      try {
        const written = await writeTransaction(pool, order.idempotency, now, async (client) => {
          const customer = await lockCustomer(client, owner);
          try {
            if (order.kind === 'caller_id') {
              const started = await callerIds.start(client, customer, order.phoneNumber, now);
              code = started.code;
              // The stored reply (an idempotent replay) leaves the code out: GET shows it.
              return { created: true, body: numberView(started.row) };
            }
            return { created: true, body: numberView(await rentIn(client, customer, order.areaCode, bought, now)) };
          } catch (err) {
            orderRefusal(err);
          }
        });
        return code === undefined || written.replayed ? written : { ...written, body: { ...written.body, verification: written.body.verification && { ...written.body.verification, code } } };
      } catch (err) {
        // Nothing the carrier sold to a change that did not commit is kept.
        await giveBack(owner.mode, bought);
        throw err;
      }
    },

    provisionNumber,

    /** Live customers whose number step is waiting on the service, tried again (an hour after their last try). */
    async retryNumberSteps(now: Date): Promise<number> {
      let rented = 0;
      for (const customerId of await createNumberRepository(pool).customersAwaitingNumber(new Date(now.getTime() - NUMBER_ORDER_RETRY_MS), BATCH)) {
        const outcome = await provisionNumber(customerId);
        if (outcome.ok && outcome.number) rented++;
      }
      return rented;
    },
  };
}

/** A refusal of the number step as provisioning shows it (null: not the step's to show, rethrown). */
function stepBlocker(err: unknown): { code: NumberOrderBlocker; message: string } | null {
  if (err instanceof CarrierNumberError) {
    switch (err.reason) {
      case 'regulatory_bundle_required':
        return { code: 'number_regulatory_bundle_required', message: 'The carrier requires a regulatory bundle for numbers in this country; the service files it.' };
      case 'address_required':
        return { code: 'number_address_required', message: 'The carrier requires a local address for numbers in this country; the service files it.' };
      case 'no_stock':
        return { code: 'no_number_available', message: 'The carrier has no number for sale in this country right now.' };
      default:
        return { code: 'carrier_unavailable', message: 'The carrier could not be reached; the service tries again.' };
    }
  }
  if (isRefusal(err)) {
    if (err.code === 'insufficient_balance') return { code: 'insufficient_balance', message: "The balance cannot cover the first month's rent; top up and the service rents one." };
    if (err.code === 'no_number_available') return { code: 'no_number_available', message: 'The carrier has no number for sale in this country right now.' };
    if (err.code === 'carrier_unavailable') return { code: 'carrier_unavailable', message: 'No carrier is set up for live numbers yet; the service rents one once it is.' };
  }
  return null;
}
