import type { Deps } from '../../runtime/deps.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { parsePhone } from '../shared/phone.ts';
import { dncView } from './views.ts';
import { withTransaction } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { iso, type Mode } from '../../runtime/types.ts';
import { DNC_REGISTRIES, describeStale, registryFor, staleAfter, staleRegistries } from '../shared/dnc-registries.ts';

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
    /**
     * Lists a number (created: false when it already was), recording the Idempotency-Key with it
     * and the mode of the key that added it (only a key of that mode may remove it).
     */
    async add(accountId: string, mode: Mode, input: { phone: string; reason: string | null }, idempotency: IdempotencyClaim | undefined): Promise<Written<ReturnType<typeof dncView>>> {
      const e164 = await e164Of(accountId, input.phone);
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        const { row, created } = await createDncRepository(client).add({ accountId, e164, source: 'api', mode, reason: input.reason, callId: null, now });
        return { created, body: dncView(row) };
      });
    },

    async list(accountId: string, page: Page) {
      const before = await pageStart(pool, page, { table: 'dnc_numbers', accountId });
      return toList(await createDncRepository(pool).list(accountId, page.limit + 1, before), page.limit, dncView);
    },

    /**
     * Takes a number off the reseller's own list: a callee's own request cannot be undone by the
     * reseller, and an entry only by a key of the mode that added it (a test key never relaxes
     * live compliance; an entry older than the mode's record counts as live's).
     */
    async remove(accountId: string, mode: Mode, phone: string) {
      const e164 = await e164Of(accountId, phone);
      const repo = createDncRepository(pool);
      if (!(await repo.removeIfAddedBy(accountId, e164, mode))) {
        // Nothing was removed: the number was not listed, a callee asked for it, or another mode added it.
        const entry = await repo.get(accountId, e164);
        if (entry?.source === 'callee_request') throw new Refusal('dnc_entry_protected');
        if (entry) {
          const added = entry.mode ?? 'live';
          throw new Refusal('dnc_entry_other_mode', `That number was added with a ${added} key; only a ${added} key can remove it.`);
        }
        throw new Refusal('dnc_entry_not_found');
      }
      return { object: 'dnc_entry' as const, phone: e164, deleted: true };
    },
  };
}

export type DncList = ReturnType<typeof createDncList>;

/**
 * Loads a national do-not-call registry file: one number per line (CSV: the first column),
 * national or E.164, read in `country`. The load replaces the registry's list (numbers that left
 * the registry leave ours; the accounts' own lists are untouched) and is its new import date.
 * `registry` names it where the country has several (GB: GB-TPS, GB-CTPS). Customers of the
 * country are re-assessed, and requests that waited on a stale registry are looked at again.
 */
export async function importRegistry(deps: Deps, r: { country: string; registry?: string; source: string; text: string }) {
  const country = r.country.toUpperCase();
  const rule = registryFor(country, r.registry);
  if (!rule) {
    const known = DNC_REGISTRIES.map((k) => `${k.id} (${k.country})`).join(', ');
    throw new Refusal('dnc_registry_unknown', `No national do-not-call registry ${r.registry ? `"${r.registry}" ` : ''}of ${country} is known, or the country has several: name one. Known: ${known}.`);
  }
  const numbers: string[] = [];
  const invalid: number[] = [];
  r.text.split(/\r?\n/).forEach((line, i) => {
    const cell = line.split(',')[0].trim().replace(/^"|"$/g, '');
    if (!cell || /^[a-z_ ]+$/i.test(cell)) return; // blank lines and a header
    const parsed = parsePhone(cell, country);
    if (parsed.ok && parsed.country === country) numbers.push(parsed.e164);
    else invalid.push(i + 1);
  });
  // A load replaces the list: an empty or unreadable file would empty it.
  if (numbers.length === 0) throw new Refusal('dnc_registry_empty');
  const now = deps.clock.now();
  const unique = [...new Set(numbers)];
  const { added, removed } = await withTransaction(deps.pool, async (client) => {
    const result = await createDncRepository(client).replaceRegistry({ registry: rule.id, country, source: r.source, numbers: unique, now });
    await refreshReadiness(client, { country }, now);
    await createCallRepository(client).wakeWaitingEverywhere(['dnc_registry_stale'], now);
    return result;
  });
  return {
    object: 'dnc_registry_import' as const,
    registry: rule.id,
    country,
    source: r.source,
    numbers: unique.length,
    imported: added,
    removed,
    invalid_lines: invalid.slice(0, 100),
    imported_at: iso(now),
    stale_after: iso(staleAfter(rule, now)),
  };
}

/** Every modelled registry with its last load, for the operator: which stop calls now and since when. */
export async function listRegistries(deps: Pick<Deps, 'pool' | 'clock'>) {
  const now = deps.clock.now();
  const imports = await createDncRepository(deps.pool).registryImports();
  return {
    object: 'list' as const,
    data: DNC_REGISTRIES.map((rule) => {
      const last = imports.find((i) => i.registry === rule.id) ?? null;
      const stale = staleRegistries(rule.country, last ? [{ registry: rule.id, importedAt: last.imported_at }] : [], now).find((s) => s.id === rule.id);
      return {
        object: 'dnc_registry' as const,
        id: rule.id,
        country: rule.country,
        name: rule.name,
        citation: rule.citation,
        max_age_days: rule.maxAgeDays,
        imported_at: last ? iso(last.imported_at) : null,
        source: last?.source ?? null,
        numbers: last?.numbers ?? 0,
        stale_after: last ? iso(staleAfter(rule, last.imported_at)) : null,
        current: !stale,
        message: stale ? describeStale(stale) : null,
      };
    }),
    has_more: false,
  };
}
