import type { CustomerRow } from '../../db/customers.ts';
import type { OnboardingLinkRow } from '../../db/onboarding-links.ts';
import type { ReadinessRow } from '../../db/readiness.ts';
import { iso } from '../../runtime/types.ts';
import type { ReadinessAssessment } from './readiness.ts';

/**
 * The name the customer's business goes by on calls and in the coach: `brand_name` when it says
 * something, else `name` (never blank: the API refuses a blank name).
 */
export function businessName(c: Pick<CustomerRow, 'name' | 'brand_name'>): string {
  return c.brand_name?.trim() || c.name.trim();
}

export function customerView(c: CustomerRow) {
  return {
    object: 'customer' as const,
    id: c.id,
    external_ref: c.external_ref,
    name: c.name,
    brand_name: c.brand_name,
    website_url: c.website_url,
    country: c.country,
    timezone: c.timezone,
    status: c.status,
    mode: c.mode,
    created_at: iso(c.created_at),
  };
}

export function readinessView(f: ReadinessRow, a: ReadinessAssessment) {
  return {
    object: 'readiness' as const,
    customer_id: f.customer_id,
    external_ref: f.external_ref,
    country: f.country,
    calling_language: f.calling_language,
    ready_for_live_calls: a.ready,
    blockers: a.blockers.map((b) => ({ code: b.code, message: b.message })),
    checks: a.checks,
  };
}

export function limitsView(c: CustomerRow, spend?: { today_cents: number; month_cents: number }) {
  return {
    object: 'customer_limits' as const,
    customer_id: c.id,
    external_ref: c.external_ref,
    daily_spend_cap_cents: c.daily_spend_cap_cents,
    monthly_spend_cap_cents: c.monthly_spend_cap_cents,
    max_concurrent_calls: c.max_concurrent_calls,
    ...(spend ? { spend } : {}),
  };
}

/** Status as the reseller sees it: an active link past its expiry reads `expired`. */
export function onboardingLinkView(l: OnboardingLinkRow, now: Date, mint?: { expiresInDays: number }) {
  const status = l.status === 'active' && l.expires_at <= now ? 'expired' : l.status;
  return {
    object: 'onboarding_link' as const,
    id: l.id,
    customer_id: l.customer_id,
    prefix: l.prefix,
    status,
    expires_at: iso(l.expires_at),
    completed_at: iso(l.completed_at),
    accepted_by: l.accepted_by,
    created_at: iso(l.created_at),
    ...(mint ? { expires_in_days: mint.expiresInDays } : {}),
  };
}
