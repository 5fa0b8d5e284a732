import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import { liveCarrierKind } from '../../runtime/config.ts';
import type { Mode } from '../../runtime/types.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { Refusal, isRefusal } from '../../runtime/refusal.ts';
import { withTransaction, type Client, type Queryable } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { recurringDueBy } from '../../db/recurring-due.ts';
import { createCustomerRepository, isUuid, type CustomerRow } from '../../db/customers.ts';
import { spendableCents } from '../../money/balance-view.ts';
import { recordEvent } from '../../db/events.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import { addDays, dayOf, inNoticeWindow, nextRenewal, reached, releaseDueOn, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { CarrierNumberError, type CallerIdValidationReport, type NumberCarrier } from '../../telephony/carrier.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import type { NumberOrderBlocker } from '../customer/provisioning.ts';
import { nationalFormat } from '../shared/phone.ts';
import { callerIdNumber, verificationLimitRefusal } from './caller-id-rules.ts';
import { pageStart, toList, type List, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { numberView, type NumberView } from './views.ts';
import { areaCodeRefusal } from './area-code.ts';

/**
 * Numbers (issue 14): a customer's rented numbers and verified caller IDs, their monthly rent,
 * its countdown, and their release. A plain module, not an actor: every change locks the
 * number's row (or, for a new one, the customer's row) in the transaction that makes it, so
 * processes may share the work; the carrier is asked inside that transaction, and a number
 * bought in a transaction that then rolls back is given back at once.
 *
 * Money moves only through the money writer (`chargeRecurring`); events are recorded in the
 * same transaction as the change they describe.
 */

/** How long a caller ID's verification may take before the carrier is asked and, failing that, it fails. */
export const VERIFICATION_MINUTES = 10;
/** Candidates tried when a number sells out between the search and the purchase. */
const PURCHASE_TRIES = 3;
const BATCH = 100;
/** How long a verification report waits for its number's row to be committed, and how often it looks. */
const REPORT_WAIT_MS = 5_000;
const REPORT_POLL_MS = 100;
/** A failed try of the provisioning number step is tried again after this long (or at the next request). */
export const NUMBER_ORDER_RETRY_MS = 60 * 60_000;

export interface NumbersDeps extends Pick<Deps, 'pool' | 'clock' | 'log' | 'config'> {
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

export interface NumberOrder {
  kind: 'rented' | 'caller_id';
  phoneNumber?: string;
  areaCode?: string;
  idempotency?: IdempotencyClaim;
}

/** What the provisioning number step did. */
export type NumberStepOutcome = { ok: true; number: NumberView | null } | { ok: false; code: NumberOrderBlocker; message: string };


const PRICE: Record<NumberRow['kind'], number> = {
  rented: ITEM_PRICES.number_cents_per_month,
  caller_id: ITEM_PRICES.caller_id_cents_per_month,
};

const CAUSE: Record<NumberRow['kind'], 'number' | 'caller_id'> = { rented: 'number', caller_id: 'caller_id' };

export type Numbers = ReturnType<typeof createNumbers>;

/** A number id that cannot name a row names none. */
const notFoundUnlessUuid = (id: string) => {
  if (!isUuid(id)) throw new Refusal('number_not_found');
};

export function createNumbers(deps: NumbersDeps) {
  const { pool, clock, log, config, carriers, money, secrets } = deps;

  /** Live numbers need a carrier: without one nothing is bought, verified or charged. */
  function requireCarrier(mode: Mode): void {
    if (mode === 'live' && !liveCarrierKind(config)) throw new Refusal('carrier_unavailable', 'No carrier is set up for live numbers yet; nothing was bought or charged.');
  }

  const view = (row: NumberRow) => numberView(row, row.status === 'verifying' && row.verification_code_sealed ? secrets.open(row.verification_code_sealed) : undefined);

  async function lockCustomer(db: Queryable, owner: NumberOwner): Promise<CustomerRow> {
    const customer = await createCustomerRepository(db).lockOwned(owner.customerId, owner.accountId, owner.mode);
    if (!customer) throw new Refusal('customer_not_found');
    return customer;
  }

  function rentDescription(row: Pick<NumberRow, 'kind' | 'e164'>, from: string, to: string): string {
    const what = row.kind === 'rented' ? 'Phone number' : 'Verified caller ID';
    return `${what} ${nationalFormat(row.e164)}, ${from} to ${to}`;
  }

  /**
   * Charges the period of `row` that starts on `periodStart`; the period ends at the next
   * renewal. `charged` and `already_charged` both mean the period is paid.
   */
  async function chargePeriod(client: Client, row: NumberRow, periodStart: string, now: Date) {
    const periodEnd = nextRenewal(periodStart, row.anchor_day ?? Number(periodStart.slice(8, 10)));
    const result = await money.chargeRecurring(client, {
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
    });
    return { paid: result.outcome !== 'insufficient_balance', periodEnd };
  }

  async function emit(db: Queryable, row: NumberRow, type: 'number.assigned' | 'number.payment_due' | 'number.released', now: Date) {
    await recordEvent(db, { accountId: row.account_id, mode: row.mode, type, data: numberView(row), now });
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

  /** Gives back numbers bought in a transaction that did not commit (logged if the carrier refuses). */
  async function giveBack(mode: Mode, bought: string[]): Promise<void> {
    for (const carrierNumberId of bought) {
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
        purchase = await carrier.buyNumber({ e164: candidate.e164 });
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

  /**
   * One renewal look at a number (claimed by the job): the early warning when the notice window
   * has opened and the balance will not cover the rent; at renewal, the rent (every period due,
   * if the service was away), or the countdown when it cannot be taken.
   */
  async function renewOne(client: Client, id: string, today: string, now: Date): Promise<boolean> {
    const repo = createNumberRepository(client);
    let row = await repo.claim(id);
    if (!row || (row.status !== 'active' && row.status !== 'payment_due') || !row.renews_on) return false;
    if (!reached(today, row.renews_on)) {
      if (!inNoticeWindow(today, row.renews_on) || row.notice_sent_for === row.renews_on) return false;
      // Every rent and hosting of the account falling due by this renewal competes for the same money.
      const due = await recurringDueBy(client, row.account_id, row.mode, row.renews_on);
      const short = (await spendableCents(client, row.account_id, row.mode)) < Math.max(due, row.monthly_cents);
      row = await repo.update(row.id, { notice_sent_for: row.renews_on }, now);
      if (short) await emit(client, row, 'number.payment_due', now);
      return short;
    }
    let charged = false;
    // Every period due is charged in turn (a service away over a renewal catches up).
    while (row.renews_on && reached(today, row.renews_on)) {
      const { paid, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
      if (!paid) {
        if (row.status === 'active') {
          // The countdown runs from the renewal, or from today when the service was away past it:
          // a countdown that has already ended would be none.
          const from = today > row.renews_on ? today : row.renews_on;
          row = await repo.update(row.id, { status: 'payment_due', release_due_on: releaseDueOn(from), notice_sent_for: row.renews_on }, now);
          await emit(client, row, 'number.payment_due', now);
          return true;
        }
        return charged;
      }
      row = await repo.update(row.id, { status: 'active', renews_on: periodEnd, release_due_on: null }, now);
      charged = true;
    }
    return charged;
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
      const kept = await keptNumbers(bought);
      await giveBack(mode, bought.filter((b) => !kept.has(b)));
    }
  }

  /** Releases one number whose countdown ended (claimed; the carrier first); false if it is not due, held, or refused. */
  async function releaseOne(id: string, today: string, now: Date): Promise<boolean> {
    try {
      return await withTransaction(pool, async (client) => {
        const row = await createNumberRepository(client).claim(id);
        if (!row || row.status !== 'payment_due' || !row.release_due_on || !reached(today, row.release_due_on) || !row.renews_on) return false;
        // Money that came while this job held the number (a top-up skips a held number) pays it now.
        const { paid, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
        if (paid) {
          await createNumberRepository(client).update(row.id, { status: 'active', renews_on: periodEnd, release_due_on: null }, now);
          return false;
        }
        await releaseAtCarrier(row);
        await markReleased(client, row, now);
        log.info({ number_id: row.id, customer_id: row.customer_id }, 'number released at the end of its rent countdown');
        return true;
      });
    } catch (err) {
      if (!(err instanceof CarrierNumberError)) throw err;
      log.error({ err, number_id: id }, 'the carrier could not release a number whose countdown ended; tried again next run');
      return false;
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
              const started = await startCallerId(client, customer, order.phoneNumber, now);
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
        const kept = await keptNumbers(bought);
        await giveBack(owner.mode, bought.filter((b) => !kept.has(b)));
        throw err;
      }
    },

    async get(owner: NumberOwner, numberId: string): Promise<NumberView> {
      notFoundUnlessUuid(numberId);
      const row = await createNumberRepository(pool).get(owner.customerId, numberId);
      if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('number_not_found');
      return view(row);
    },

    async list(owner: NumberOwner, page: Page): Promise<List<NumberView>> {
      const before = await pageStart(pool, page, { table: 'phone_numbers', customerId: owner.customerId });
      const rows = await createNumberRepository(pool).list(owner.customerId, page.limit + 1, before);
      return toList(rows, page.limit, view);
    },

    /** DELETE: released at the carrier and here, permanently; the month paid is not refunded. */
    async release(owner: NumberOwner, numberId: string): Promise<NumberView> {
      notFoundUnlessUuid(numberId);
      const now = clock.now();
      return withTransaction(pool, async (client) => {
        const row = await createNumberRepository(client).lock(numberId, owner.customerId);
        if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('number_not_found');
        if (row.status === 'released') return numberView(row);
        try {
          await releaseAtCarrier(row);
        } catch (err) {
          log.error({ err, number_id: row.id }, 'the carrier could not release a number; nothing changed');
          throw new Refusal('carrier_unavailable');
        }
        const released = numberView(await markReleased(client, row, now));
        // A caller ID released while verifying may have been verified at the carrier meanwhile
        // (its report lost): asked now, and removed there, so no caller ID is left to nobody.
        if (row.kind === 'caller_id' && row.status === 'verifying') {
          try {
            const status = await carriers[row.mode].callerIdStatus(row.e164);
            if (status.verified) await removeStrayCallerId(row, status.carrierCallerIdId);
          } catch (err) {
            log.warn({ err, number_id: row.id }, 'the carrier could not be asked about a caller id released while verifying; a late report removes it');
          }
        }
        return released;
      });
    },

    provisionNumber,

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

    /** Money came into `accountId`'s live balance (money writer reaction): unpaid rent is taken, in that transaction. */
    async fundsAdded(client: Client, accountId: string, now: Date): Promise<void> {
      const repo = createNumberRepository(client);
      for (const row of await repo.claimUnpaidOf(accountId)) {
        if (!row.renews_on) continue;
        const { paid, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
        // One the money does not cover waits; a cheaper one (a caller ID) may still be paid.
        if (paid) await repo.update(row.id, { status: 'active', renews_on: periodEnd, release_due_on: null }, now);
      }
    },

    /** The renewal job: rent of every number due (and early warnings); each number in its own transaction. Returns how many were charged or warned. */
    async renewDue(now: Date): Promise<number> {
      const today = dayOf(now);
      const noticeUntil = addDays(today, RENEWAL_NOTICE_DAYS);
      let done = 0;
      let after = 0;
      for (;;) {
        const due = await createNumberRepository(pool).dueForRenewal(today, noticeUntil, BATCH, after);
        for (const { id, seq } of due) {
          after = seq;
          if (await withTransaction(pool, (client) => renewOne(client, id, today, now))) done++;
        }
        if (due.length < BATCH) return done;
      }
    },

    /** Releases numbers whose countdown ended, batch after batch until none is left. Returns how many. */
    async releaseOverdue(now: Date): Promise<number> {
      const today = dayOf(now);
      let released = 0;
      // A number the carrier refused (or another process holds) comes back in the next batch: each is tried once a run.
      const tried = new Set<string>();
      for (;;) {
        const ids = (await createNumberRepository(pool).dueForRelease(today, BATCH)).filter((id) => !tried.has(id));
        if (ids.length === 0) return released;
        for (const id of ids) {
          tried.add(id);
          if (await releaseOne(id, today, now)) released++;
        }
      }
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

  /** Which of `bought` ended up recorded (committed) as a number. */
  function keptNumbers(bought: string[]): Promise<Set<string>> {
    return createNumberRepository(pool).keptCarrierRefs(bought);
  }
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
