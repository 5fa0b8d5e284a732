import type { Deps } from '../../runtime/deps.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { parsePhone } from '../shared/phone.ts';
import { dncView } from './views.ts';

/**
 * The reseller's do-not-call list (numbers in E.164; a national number is read in the account's
 * country). A plain module, not an actor: each write is one statement whose outcome PostgreSQL
 * decides (the primary key for an add, a conditional delete for a removal), so concurrent writes
 * of one number answer as if queued, in one process or across several. The call actor adds a
 * callee's own requests; the dialler reads the list in its admission statement.
 */
export function createDncList(deps: Deps) {
  const { pool, clock } = deps;

  /** The number as the account's list keeps it; `invalid_phone_number` when it is none. */
  async function e164Of(accountId: string, phone: string): Promise<string> {
    const account = await createAccountRepository(pool).get(accountId);
    if (!account) throw new Refusal('account_not_found');
    const parsed = parsePhone(phone, account.country);
    if (!parsed.ok) throw new Refusal('invalid_phone_number');
    return parsed.e164;
  }

  return {
    /** Lists a number (created: false when it already was), recording the Idempotency-Key with it. */
    async add(accountId: string, input: { phone: string; reason: string | null }, idempotency: IdempotencyClaim | undefined): Promise<Written<ReturnType<typeof dncView>>> {
      const e164 = await e164Of(accountId, input.phone);
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        const { row, created } = await createDncRepository(client).add({ accountId, e164, source: 'api', reason: input.reason, callId: null, now });
        return { created, body: dncView(row) };
      });
    },

    async list(accountId: string, page: Page) {
      const before = await pageStart(pool, page, { table: 'dnc_numbers', accountId });
      return toList(await createDncRepository(pool).list(accountId, page.limit + 1, before), page.limit, dncView);
    },

    /** Takes a number off the reseller's own list; a callee's own request cannot be undone by the reseller. */
    async remove(accountId: string, phone: string) {
      const e164 = await e164Of(accountId, phone);
      const repo = createDncRepository(pool);
      if (!(await repo.removeUnlessCalleeRequest(accountId, e164))) {
        // Nothing was removed: the number was not listed, or a callee asked for it.
        if ((await repo.get(accountId, e164))?.source === 'callee_request') throw new Refusal('dnc_entry_protected');
        throw new Refusal('dnc_entry_not_found');
      }
      return { object: 'dnc_entry' as const, phone: e164, deleted: true };
    },
  };
}

export type DncList = ReturnType<typeof createDncList>;

/**
 * Imports a national do-not-call registry file: one number per line (CSV: the first column),
 * national or E.164, read in `country`. Returns how many were new and which lines were not numbers.
 */
export async function importRegistry(deps: Deps, r: { country: string; source: string; text: string }) {
  const numbers: string[] = [];
  const invalid: number[] = [];
  r.text.split(/\r?\n/).forEach((line, i) => {
    const cell = line.split(',')[0].trim().replace(/^"|"$/g, '');
    if (!cell || /^[a-z_ ]+$/i.test(cell)) return; // blank lines and a header
    const parsed = parsePhone(cell, r.country);
    if (parsed.ok) numbers.push(parsed.e164);
    else invalid.push(i + 1);
  });
  const imported = await createDncRepository(deps.pool).importRegistry([...new Set(numbers)], r.country, r.source, deps.clock.now());
  return { object: 'dnc_registry_import' as const, country: r.country, source: r.source, numbers: numbers.length, imported, invalid_lines: invalid.slice(0, 100) };
}
