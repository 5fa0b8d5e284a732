import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { isUuid } from '../../db/customers.ts';
import { pageStart, toList, type List, type Page } from '../shared/list.ts';
import { numberView, type NumberView } from './views.ts';
import { createNumberTools, type NumberOwner, type NumbersDeps } from './tools.ts';
import { createNumberOrders } from './orders.ts';
import { createCallerIds } from './caller-ids.ts';
import { createRenewals } from './renewals.ts';

export type { NumbersDeps, NumberOwner } from './tools.ts';
export type { NumberOrder, NumberStepOutcome } from './orders.ts';

/**
 * Numbers (issue 14): a customer's rented numbers and verified caller IDs, their monthly rent,
 * its countdown, and their release. A plain module, not an actor: every change locks the
 * number's row (or, for a new one, the customer's row) in the transaction that makes it, so
 * processes may share the work. This file is the resource (read, list, release) and puts the
 * parts together: orders (`orders.ts`), caller ID verification (`caller-ids.ts`), renewals and
 * the countdown (`renewals.ts`), and what they share (`tools.ts`).
 *
 * Money moves only through the money writer (`chargeRecurring`); events are recorded in the
 * same transaction as the change they describe.
 */

export type Numbers = ReturnType<typeof createNumbers>;

/** A number id that cannot name a row names none. */
const notFoundUnlessUuid = (id: string) => {
  if (!isUuid(id)) throw new Refusal('number_not_found');
};

export function createNumbers(deps: NumbersDeps) {
  const { pool, clock, log, carriers, secrets } = deps;
  const tools = createNumberTools(deps);
  const { releaseAtCarrier, markReleased, removeStrayCallerId } = tools;
  const callerIds = createCallerIds(deps, tools);
  const orders = createNumberOrders(deps, tools, callerIds);
  const renewals = createRenewals(deps, tools);

  const view = (row: NumberRow) => numberView(row, row.status === 'verifying' && row.verification_code_sealed ? secrets.open(row.verification_code_sealed) : undefined);

  return {
    /** POST /v1/customers/{id}/numbers: rents a number, or starts verifying a caller ID. */
    order: orders.order,

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

    /** The provisioning number step (customer actor). */
    provisionNumber: orders.provisionNumber,
    /** The carrier's report of a caller ID verification (signed callback, or the test-mode carrier). */
    verificationReported: callerIds.verificationReported,
    /** Money came into an account's live balance (money writer reaction): unpaid rent is taken, in that transaction. */
    fundsAdded: renewals.fundsAdded,
    renewDue: renewals.renewDue,
    releaseOverdue: renewals.releaseOverdue,
    expireVerifications: callerIds.expireVerifications,
    retryNumberSteps: orders.retryNumberSteps,
  };
}
