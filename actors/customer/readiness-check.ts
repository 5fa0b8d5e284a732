import type { Queryable } from '../../db/pool.ts';
import { loadReadinessFacts, loadReadinessFactsOfMany, type ReadinessRow } from '../../db/readiness.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { recordEvent } from '../../db/events.ts';
import { callReserveCents, minutesUsedNow } from '../../money/rules/pricing.ts';
import type { MoneyReactions } from '../../money/writer.ts';
import { assessReadiness, type ReadinessAssessment, type ReadinessFacts } from './readiness.ts';
import { readinessView } from './views.ts';
import { createCallRepository } from '../../db/calls.ts';
import { BLOCKER_CODES } from './readiness.ts';
import { staleRegistries } from '../shared/dnc-registries.ts';

/** The waiting reasons readiness gives a request (its blockers, and the dialler's fallback). */
const READINESS_WAITS: readonly string[] = [...BLOCKER_CODES, 'not_ready'];

/**
 * The one place readiness is read for the readiness and provisioning endpoints. The call path
 * reads the same row inside its admission statement (db/admission.ts) and assesses it through
 * `readinessFactsOf` and the same pure rule, so the two can never disagree.
 */
export async function checkReadiness(
  db: Queryable,
  customerId: string,
  now: Date,
): Promise<{ facts: ReadinessRow; assessment: ReadinessAssessment } | null> {
  const facts = await loadReadinessFacts(db, customerId, now);
  if (!facts) return null;
  const assessment = assessReadiness(readinessFactsOf(facts, now));
  return { facts, assessment };
}

/** `checkReadiness` for many customers in one statement (a page of a list): each known id's facts and assessment. */
export async function checkReadinessOfMany(
  db: Queryable,
  customerIds: readonly string[],
  now: Date,
): Promise<Map<string, { facts: ReadinessRow; assessment: ReadinessAssessment }>> {
  const rows = await loadReadinessFactsOfMany(db, customerIds, now);
  return new Map(rows.map((facts) => [facts.customer_id, { facts, assessment: assessReadiness(readinessFactsOf(facts, now)) }]));
}

/** The pure rule's facts from the readiness row; `now` prices the reserve of a call at this month's tier. */
export function readinessFactsOf(facts: ReadinessRow, now: Date): ReadinessFacts {
  return {
    mode: facts.mode,
    accountMode: facts.account_mode,
    kybStatus: facts.kyb_status,
    agreementSigned: facts.agreement_signed,
    availableCents: facts.available_cents,
    callReserveCents: callReserveCents(minutesUsedNow({ minutesMonth: facts.minutes_month, minutesUsed: facts.minutes_used }, now)),
    countryOpened: facts.country_opened,
    speechCertified: facts.speech_certified,
    hasNumberInCountry: facts.has_number_in_country,
    liveCarrierConfigured: facts.live_carrier_configured,
    scriptCertified: facts.script_certified,
    termsAccepted: facts.terms_accepted,
    requestedSteps: facts.requested_steps ?? [],
    onboardingLinkActive: facts.onboarding_link_active,
    staleDncRegistries: staleRegistries(
      facts.country,
      facts.dnc_registry_imports.map((i) => ({ registry: i.registry, importedAt: new Date(i.imported_at) })),
      now,
    ),
  };
}

/** Which customers a change may have made ready (or unready). */
export type ReadinessScope = { customerId: string } | { accountId: string } | { locale: string } | { country: string };

/**
 * Re-assesses the customers a committed-in-this-transaction change touches. Ready means ready for
 * the customer's own calls (`assessment.ready`: the test question for a test customer, the live
 * one for a live customer). A customer that has just become ready gets `ready_at`, leaves
 * `prospect` and records `customer.ready` in the same transaction; one that stopped being ready
 * loses `ready_at`, so becoming ready again emits again.
 */
export async function refreshReadiness(db: Queryable, scope: ReadinessScope, now: Date): Promise<void> {
  const customers = createCustomerRepository(db);
  // One customer needs no lookup: checkReadiness answers null for an unknown id.
  const ids =
    'customerId' in scope
      ? [scope.customerId]
      : 'accountId' in scope
        ? await customers.idsOfAccount(scope.accountId)
        : 'locale' in scope
          ? await customers.idsCallingIn(scope.locale)
          : await customers.idsIn(scope.country);
  for (const id of ids) {
    const result = await checkReadiness(db, id, now);
    if (!result) continue;
    const { facts, assessment } = result;
    if (assessment.ready && !facts.ready_at) {
      await customers.update(id, {
        ready_at: now,
        ...(facts.customer_status === 'prospect' ? { status: 'active' as const } : {}),
        ...(facts.first_ready_at ? {} : { first_ready_at: now }),
      });
      await recordEvent(db, {
        accountId: facts.account_id,
        mode: facts.mode,
        type: 'customer.ready',
        data: readinessView(facts, assessment),
        now,
      });
      // Requests held back by readiness need not wait for their next retry.
      await createCallRepository(db).wakeWaiting({ accountId: facts.account_id, customerId: id, reasons: READINESS_WAITS, now });
    } else if (!assessment.ready && facts.ready_at) {
      await customers.update(id, { ready_at: null });
    }
  }
}

/** What readiness does when money moves: a spendable balance that crossed one call's hold re-assesses the account's customers. */
export const readinessFollowsMoney: MoneyReactions = {
  spendableCrossedCallReserve: (db, accountId, now) => refreshReadiness(db, { accountId }, now),
};
