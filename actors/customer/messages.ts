import type { IdempotencyClaim } from '../../db/idempotency.ts';
import type { CustomerLimitField } from '../../db/customers.ts';
import type { List, Page } from '../shared/list.ts';
import type { Written } from '../shared/transaction.ts';
import type { calendarLinkView, customerView, limitsView, onboardingLinkView, readinessView } from './views.ts';
import type { ProvisioningView } from './provisioning.ts';
import type { CallSettingsPatch } from './call-settings-change.ts';
import type { BookingSettingsPatch } from './booking-settings.ts';
import type { CalendarCredentials } from '../../calendars/calendar.ts';
import type { CalendarConnectionView } from './calendar-connection.ts';

export type ProvisioningReply = ProvisioningView & {
  object: 'provisioning';
  customer_id: string;
  mode: string;
  requested_steps?: string[];
};

/** Every message the customer actor takes. */
export type CustomerMessage =
  | { type: 'get_customer' }
  | { type: 'get_readiness' }
  | { type: 'get_provisioning' }
  | { type: 'request_provisioning'; steps?: string[]; idempotency?: IdempotencyClaim }
  | { type: 'mint_onboarding_link'; email?: string; idempotency?: IdempotencyClaim }
  | { type: 'list_onboarding_links'; page: Page }
  | { type: 'complete_onboarding'; linkId: string; acceptedBy: string }
  | { type: 'get_limits' }
  | { type: 'update_customer'; patch: CustomerPatch; idempotency?: IdempotencyClaim }
  | { type: 'update_limits'; patch: Partial<Record<CustomerLimitField, number | null>>; idempotency?: IdempotencyClaim }
  | { type: 'certify_script'; script: string | null }
  | { type: 'record_research'; notes: string }
  | { type: 'get_calendar' }
  | { type: 'calendar_connect'; credentials: CalendarCredentials }
  | { type: 'calendar_disconnect' }
  | { type: 'mint_calendar_link'; email?: string; idempotency?: IdempotencyClaim }
  | { type: 'assign_number'; e164: string; kind: 'rented' | 'caller_id' };

/** What PATCH /v1/customers/{id} changes: send only what changes (docs/api.md, "Customers"). */
export interface CustomerPatch {
  registered_name?: string | null;
  /** The postal address said in a UK call's opening (PECR reg. 24). */
  registered_address?: string | null;
  call_settings?: CallSettingsPatch | null;
  /** The booking rules (issue 24): any field; null resets. */
  booking?: BookingSettingsPatch | null;
}

export interface CustomerReplies {
  get_customer: ReturnType<typeof customerView>;
  get_readiness: ReturnType<typeof readinessView>;
  get_provisioning: ProvisioningReply;
  request_provisioning: Written<ProvisioningReply>;
  mint_onboarding_link: Written<ReturnType<typeof onboardingLinkView> & { url?: string }>;
  list_onboarding_links: List<ReturnType<typeof onboardingLinkView>>;
  complete_onboarding: ReturnType<typeof onboardingLinkView>;
  get_limits: ReturnType<typeof limitsView>;
  update_customer: Written<ReturnType<typeof customerView>>;
  update_limits: Written<ReturnType<typeof limitsView>>;
  certify_script: ReturnType<typeof readinessView>;
  record_research: { object: 'research_notes'; customer_id: string; recorded: true };
  get_calendar: CalendarConnectionView;
  calendar_connect: CalendarConnectionView;
  calendar_disconnect: CalendarConnectionView;
  mint_calendar_link: Written<ReturnType<typeof calendarLinkView> & { url?: string }>;
  assign_number: ReturnType<typeof readinessView>;
}
