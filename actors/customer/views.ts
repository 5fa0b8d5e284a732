import type { CustomerRow } from '../../db/customers.ts';
import type { OnboardingLinkRow } from '../../db/onboarding-links.ts';
import type { CalendarLinkRow } from '../../db/calendar-links.ts';
import type { ReadinessRow } from '../../db/readiness.ts';
import { iso } from '../../runtime/types.ts';
import type { Blocker, ReadinessAssessment } from './readiness.ts';
import { consentNotices } from '../shared/requested-call-only.ts';
import { callSettingsOf } from './call-settings.ts';
import { bookingSettingsOf } from './booking-settings.ts';

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
    phone: c.phone,
    registered_name: c.registered_name,
    registered_address: c.registered_address,
    // As in force, defaults filled in: what the customer's calls will do (docs/api.md, "Call settings").
    call_settings: callSettingsOf(c),
    // The booking rules in force, defaults filled in (docs/api.md, "Booking settings").
    booking: bookingSettingsOf(c),
    country: c.country,
    timezone: c.timezone,
    status: c.status,
    mode: c.mode,
    created_at: iso(c.created_at),
  };
}

/** Both questions: `blockers` answers the live one for every customer, `test_blockers` the test one. */
export function readinessView(f: ReadinessRow, a: ReadinessAssessment) {
  const blockerView = (b: Blocker) => ({
    code: b.code,
    message: b.message,
    waiting_on: b.waitingOn,
    // The action's path names this customer, so a program can send it as it is.
    action: b.action?.type === 'api' ? { ...b.action, path: b.action.path.replace('{id}', f.customer_id) } : b.action,
  });
  return {
    object: 'readiness' as const,
    customer_id: f.customer_id,
    external_ref: f.external_ref,
    country: f.country,
    calling_language: f.calling_language,
    ready_for_live_calls: a.live.ready,
    blockers: a.live.blockers.map(blockerView),
    checks: a.checks,
    ready_for_test_calls: a.test.ready,
    test_blockers: a.test.blockers.map(blockerView),
    // Not blockers: where only a requested call is lawful (Washington, Maine), other requests are refused.
    notices: consentNotices(f.country),
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
    emailed_to: l.emailed_to,
    created_at: iso(l.created_at),
    ...(mint ? { expires_in_days: mint.expiresInDays } : {}),
  };
}

/** POST /v1/customers/{id}/calendar_link's answer (the URL added once, on the mint response). */
export function calendarLinkView(l: CalendarLinkRow) {
  return { object: 'calendar_link' as const, customer_id: l.customer_id, prefix: l.prefix, expires_at: l.expires_at.toISOString(), emailed_to: l.emailed_to };
}
