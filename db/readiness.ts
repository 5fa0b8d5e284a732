import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * Every fact readiness and provisioning decide on, read in one statement so the answer is one
 * consistent snapshot. The call path reads the same row through the same query.
 */
export interface ReadinessRow {
  customer_id: string;
  external_ref: string | null;
  mode: Mode;
  country: string;
  customer_status: string;
  script_certified: boolean;
  terms_accepted: boolean;
  /** The customer's calendar connection (calendar_connections): null when never connected. */
  calendar_status: 'working' | 'failing' | null;
  /** Why a failing connection stopped working (for the customer; no secret), else null. */
  calendar_failure_message: string | null;
  ready_at: Date | null;
  first_ready_at: Date | null;
  account_id: string;
  account_mode: Mode;
  account_status: string;
  kyb_status: string;
  agreement_signed: boolean;
  available_cents: number;
  minutes_month: string | null;
  minutes_used: number;
  calling_language: string | null;
  country_opened: boolean;
  speech_certified: boolean;
  has_number_in_country: boolean;
  /** Whether live mode has a carrier (the `live_carrier` setting each process writes at start-up). */
  live_carrier_configured: boolean;
  /** Why the service's last try of the number step did not rent one (number_orders), or null. */
  number_order_outcome: string | null;
  requested_steps: string[] | null;
  onboarding_link_active: boolean;
  /** The last load of each national do-not-call registry of the customer's country (JSON: imported_at is text). */
  dnc_registry_imports: { registry: string; imported_at: string }[];
}

/**
 * The readiness facts of customer $1 at instant $2 (which onboarding links have expired). Shared
 * text: the admission statement (db/admission.ts) embeds it, so the call path reads exactly the
 * row the readiness endpoint reads.
 */
export const READINESS_FACTS_SQL = `SELECT c.id AS customer_id, c.external_ref, c.mode, c.country, c.status AS customer_status,
            c.script_certified_at IS NOT NULL AS script_certified,
            c.terms_accepted_at IS NOT NULL AS terms_accepted,
            (SELECT cc.status FROM calendar_connections cc WHERE cc.customer_id = c.id) AS calendar_status,
            (SELECT cc.failure_message FROM calendar_connections cc WHERE cc.customer_id = c.id) AS calendar_failure_message,
            c.ready_at, c.first_ready_at,
            a.id AS account_id, a.mode AS account_mode, a.status AS account_status, a.kyb_status,
            a.agreement_signed_at IS NOT NULL AS agreement_signed,
            m.balance_cents - m.reserved_cents AS available_cents, m.minutes_month::text AS minutes_month, m.minutes_used,
            co.calling_language, COALESCE(co.opened, false) AS country_opened,
            EXISTS (SELECT 1 FROM speech_certifications s WHERE s.locale = co.calling_language) AS speech_certified,
            EXISTS (SELECT 1 FROM phone_numbers n WHERE n.customer_id = c.id AND n.status IN ('active', 'payment_due') AND n.country = c.country)
              AS has_number_in_country,
            (SELECT array_agg(DISTINCT s.step) FROM provisioning_requests p, unnest(p.steps) AS s(step) WHERE p.customer_id = c.id)
              AS requested_steps,
            (SELECT o.outcome FROM number_orders o WHERE o.customer_id = c.id) AS number_order_outcome,
            COALESCE((SELECT st.value FROM settings st WHERE st.key = 'live_carrier'), 'none') <> 'none' AS live_carrier_configured,
            EXISTS (SELECT 1 FROM onboarding_links l WHERE l.customer_id = c.id AND l.status = 'active' AND l.expires_at > $2)
              AS onboarding_link_active,
            (SELECT coalesce(json_agg(json_build_object('registry', i.registry, 'imported_at', i.imported_at)), '[]')
               FROM dnc_registry_imports i WHERE i.country = c.country) AS dnc_registry_imports
       FROM customers c
       JOIN accounts a ON a.id = c.account_id
       -- The money of the customer's own mode, as its mode's key sees it: test mode holds none.
       JOIN account_money m ON m.account_id = a.id AND m.mode = c.mode
       LEFT JOIN countries co ON co.country = c.country
      WHERE c.id = $1`;

const READINESS = prepared('readiness_facts', READINESS_FACTS_SQL);

/** The same statement for a set of customers ($1 an array of ids): one snapshot for a page of a list. */
const READINESS_FACTS_MANY_SQL = READINESS_FACTS_SQL.replace(/WHERE c\.id = \$1$/, 'WHERE c.id = ANY($1::uuid[])');
if (READINESS_FACTS_MANY_SQL === READINESS_FACTS_SQL) throw new Error('READINESS_FACTS_SQL no longer ends with its customer condition');
const READINESS_MANY = prepared('readiness_facts_many', READINESS_FACTS_MANY_SQL);

/** `now` decides which onboarding links have expired. */
export async function loadReadinessFacts(db: Queryable, customerId: string, now: Date): Promise<ReadinessRow | null> {
  const { rows } = await db.query(READINESS([customerId, now]));
  return rows[0] ?? null;
}

/** The readiness facts of each customer of `customerIds` (in no particular order; an unknown id has no row). */
export async function loadReadinessFactsOfMany(db: Queryable, customerIds: readonly string[], now: Date): Promise<ReadinessRow[]> {
  if (customerIds.length === 0) return [];
  const { rows } = await db.query(READINESS_MANY([customerIds, now]));
  return rows;
}
