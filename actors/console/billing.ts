import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { iso } from '../../runtime/types.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { buildBalance } from '../../money/balance-view.ts';
import { dayKey } from '../../money/rules/pricing.ts';
import { ledgerReads, type LedgerFilter, type LedgerRow } from '../../db/money/ledger.ts';
import { activityReads } from '../../db/money/activity.ts';
import { consoleOverviewReads } from '../../db/console-overview.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { usageView } from '../account/views.ts';
import { CONNECTED_OUTCOMES } from '../chat/facts.ts';
import { assessReadiness } from '../customer/readiness.ts';
import { readinessFactsOf } from '../customer/readiness-check.ts';
import { centsToDecimal, csvRow, fileSlug } from './csv.ts';

/**
 * What the console shows of an account's money and activity: the overview (balance, spend, the
 * last 30 days of calls, customers that cannot call), the ledger with its filters and its CSV,
 * and the activity log. Reads only; the account comes from the console session, never the request.
 */

/** Days of the overview's chart, today (UTC, schedule clock) included. */
export const OVERVIEW_DAYS = 30;
/** The overview assesses the readiness of the account's newest customers, up to this many. */
export const OVERVIEW_CUSTOMERS_ASSESSED = 1000;
/** The overview lists at most this many blocked customers (newest first); `blocked_customer_count` counts them all. */
export const OVERVIEW_BLOCKED_LISTED = 50;
/** Lines per query of a CSV export: the file streams out page by page, never whole in memory. */
const CSV_PAGE = 500;

export const LEDGER_CSV_HEADER = [
  'created_at', 'id', 'customer_id', 'customer_name', 'type', 'cause', 'description', 'reference',
  'minutes', 'amount_cents', 'amount', 'currency', 'balance_after_cents', 'mode',
] as const;

/** A ledger filter as the console asks for it: `customer` is a service id or external_ref of the account's mode. */
export interface LedgerQuery {
  customer: string | null;
  type: string | null;
  from: Date | null;
  to: Date | null;
}

export function activityView(r: { id: string; mode: Mode; customer_id: string | null; kind: string; reason: string | null; reference: string | null; detail: unknown; created_at: Date }) {
  return {
    object: 'activity' as const,
    id: r.id,
    mode: r.mode,
    customer_id: r.customer_id,
    kind: r.kind,
    reason: r.reason,
    reference: r.reference,
    detail: r.detail ?? null,
    created_at: iso(r.created_at)!,
  };
}

export function createConsoleBilling(deps: Pick<Deps, 'pool' | 'clock' | 'realClock'>) {
  const { pool, clock, realClock } = deps;
  const connected = [...CONNECTED_OUTCOMES];

  /** The account's customer a filter names, in `mode`; any other (another account's, the other mode's) is not found. */
  async function customerOf(accountId: string, mode: Mode, idOrRef: string) {
    const row = await createCustomerRepository(pool).findByIdOrRef(accountId, mode, idOrRef);
    if (!row) throw new Refusal('customer_not_found');
    return row;
  }

  async function filterOf(accountId: string, mode: Mode, q: LedgerQuery): Promise<{ filter: LedgerFilter; customerName: string | null }> {
    const customer = q.customer ? await customerOf(accountId, mode, q.customer) : null;
    return { filter: { customerId: customer?.id ?? null, type: q.type, from: q.from, to: q.to }, customerName: customer?.name ?? null };
  }

  const balance = (accountId: string, mode: Mode) => buildBalance(pool, accountId, mode, clock.now(), realClock.now());

  /** The calls of the last 30 UTC days and the customers that cannot call, with why (the overview without money). */
  async function activityFigures(accountId: string, mode: Mode) {
    const now = clock.now();
    const reads = consoleOverviewReads(pool);
    const [days, readiness] = await Promise.all([
      reads.callsByDay(accountId, mode, dayKey(now), OVERVIEW_DAYS, connected),
      reads.customersReadiness(accountId, mode, now, OVERVIEW_CUSTOMERS_ASSESSED),
    ]);
    const blocked = readiness
      .map((row) => ({ row, assessment: assessReadiness(readinessFactsOf(row, now)) }))
      .filter(({ assessment }) => !assessment.ready);
    return {
      calls_by_day: days,
      blocked_customer_count: blocked.length,
      blocked_customers: blocked.slice(0, OVERVIEW_BLOCKED_LISTED).map(({ row, assessment }) => ({
        id: row.customer_id,
        name: row.customer_name,
        blockers: assessment.blockers.map((b) => ({ code: b.code, message: b.message, waiting_on: b.waitingOn })),
      })),
    };
  }

  return {
    balance,

    /** The overview; without `withMoney` (a role that may not read billing) the money fields are null. */
    async overview(accountId: string, mode: Mode, withMoney: boolean) {
      const [money, figures] = await Promise.all([withMoney ? balance(accountId, mode) : null, activityFigures(accountId, mode)]);
      return {
        object: 'console_overview' as const,
        mode,
        balance: money,
        low_balance_stage: money?.low_balance ?? null,
        spend: money?.spend ?? null,
        ...figures,
      };
    },

    async ledger(accountId: string, mode: Mode, q: LedgerQuery, page: Page) {
      const { filter } = await filterOf(accountId, mode, q);
      const beforeSeq = await pageStart(pool, page, { table: 'ledger_entries', accountId, mode });
      const rows = await ledgerReads(pool).listFiltered({ ...filter, accountId, mode, limit: page.limit + 1, beforeSeq });
      return toList(rows, page.limit, usageView);
    },

    /**
     * The ledger as CSV: the file name (naming the customer and the period) and the rows, newest
     * first as the list, read page by page as they are sent. Refusals (an unknown customer) come
     * before the first row.
     */
    async ledgerCsv(accountId: string, mode: Mode, q: LedgerQuery): Promise<{ filename: string; rows: AsyncIterable<string> }> {
      const { filter, customerName } = await filterOf(accountId, mode, q);
      const who = customerName === null ? 'all-customers' : fileSlug(customerName, `customer-${filter.customerId!.slice(0, 8)}`);
      const period = `${q.from ? dayKey(q.from) : 'start'}-to-${q.to ? dayKey(q.to) : 'now'}`;
      async function* rows() {
        yield csvRow(LEDGER_CSV_HEADER);
        let beforeSeq: number | null = null;
        for (;;) {
          const page: (LedgerRow & { customer_name: string | null })[] = await ledgerReads(pool).listFiltered({ ...filter, accountId, mode, limit: CSV_PAGE, beforeSeq });
          yield page.map(ledgerCsvLine).join('');
          if (page.length < CSV_PAGE) return;
          beforeSeq = page[page.length - 1]!.seq;
        }
      }
      return { filename: `ledger-${mode}-${who}-${period}.csv`, rows: rows() };
    },

    async activity(accountId: string, mode: Mode, page: Page) {
      const beforeSeq = await pageStart(pool, page, { table: 'activity_log', accountId, mode });
      const rows = await activityReads(pool).listActivity(accountId, page.limit + 1, { mode, beforeSeq });
      return toList(rows, page.limit, activityView);
    },
  };
}

export type ConsoleBilling = ReturnType<typeof createConsoleBilling>;

function ledgerCsvLine(l: LedgerRow & { customer_name: string | null }): string {
  return csvRow([
    l.created_at.toISOString(), l.id, l.customer_id, l.customer_name, l.type, l.cause, l.description, l.reference,
    l.minutes, Number(l.amount_cents), { numeral: centsToDecimal(Number(l.amount_cents)) }, 'usd', Number(l.balance_after_cents), l.mode,
  ]);
}
