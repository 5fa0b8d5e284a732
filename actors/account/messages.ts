import type { Mode } from '../../runtime/types.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import type { Page, List } from '../shared/list.ts';
import type { Written } from '../shared/transaction.ts';
import type { BrandField, AccountLimitField } from '../../db/accounts.ts';
import type { accountView, apiKeyView, brandView, adminAccountView } from './views.ts';
import type { customerView } from '../customer/views.ts';
import type { CallSettingsPatch } from '../customer/call-settings-change.ts';
import type { BookingSettingsPatch } from '../customer/booking-settings.ts';
import type { Coverage } from '../coverage/coverage.ts';
import type { buildBalance } from '../../money/balance-view.ts';
import type { usageView } from './views.ts';
import type { StartCallResult, EndCallResult } from '../../money/writer.ts';
import type { BusinessDetailsFields } from '../../db/business-details.ts';
import type { businessDetailsView } from './business-details.ts';

type Balance = Awaited<ReturnType<typeof buildBalance>>;
type UsageEntry = ReturnType<typeof usageView>;

export interface CreateCustomerInput {
  name: string;
  external_ref?: string | null;
  brand_name?: string | null;
  website_url?: string | null;
  /** The business's own number (its website shows it), valid in the customer's country. */
  phone?: string | null;
  country?: string | null;
  timezone?: string | null;
  /** The business's registered (legal) name said in a call's identification (issue 23). */
  registered_name?: string | null;
  /** The postal address said in a UK call's opening (PECR reg. 24). */
  registered_address?: string | null;
  call_settings?: CallSettingsPatch | null;
  /** The booking rules (issue 24): any field; null: the defaults. */
  booking?: BookingSettingsPatch | null;
}

export interface CreateKeyInput {
  mode: Mode;
  label: string;
  scopes?: string[];
  ip_allowlist?: string[] | null;
  expires_at?: string | null;
}

/** Every message the account actor takes (STYLE 4: commands are verbs, reads start with get_/list_). */
export type AccountMessage =
  | { type: 'create_account'; name: string; country: string }
  | { type: 'get_account' }
  | { type: 'get_me'; keyId: string; mode: Mode }
  | { type: 'create_customer'; mode: Mode; input: CreateCustomerInput; idempotency?: IdempotencyClaim }
  | { type: 'list_customers'; mode: Mode; page: Page }
  | { type: 'get_brand' }
  | { type: 'update_brand'; patch: Partial<Record<BrandField, string | null>>; idempotency?: IdempotencyClaim }
  | { type: 'create_key'; input: CreateKeyInput }
  | { type: 'list_keys' }
  | { type: 'rotate_key'; keyId: string }
  | { type: 'revoke_key'; keyId: string }
  | { type: 'set_kyb'; status: 'pending' | 'verified' | 'rejected'; note?: string | null }
  /** `signer`: the console person who signs; absent when the operator records a signature. */
  | { type: 'sign_agreement'; version: string; signer?: { userId: string; label: string } }
  | { type: 'get_business_details' }
  | { type: 'submit_business_details'; details: BusinessDetailsFields; by: { userId: string; email: string } }
  | { type: 'go_live' }
  | { type: 'set_status'; status: 'active' | 'suspended' }
  | { type: 'update_limits'; patch: Partial<Record<AccountLimitField, number | null>> }
  | { type: 'get_balance'; mode: Mode }
  | { type: 'list_usage'; mode: Mode; page: Page; customerId: string | null }
  | { type: 'top_up'; amountCents: number; paymentReference: string | null }
  | { type: 'set_auto_top_up'; thresholdCents: number | null; amountCents: number | null }
  | { type: 'refund'; amountCents: number; customerId: string | null; reference: string | null; description: string | null }
  /** `scheduleNow`: the time the hold's 30 minutes run from when the customer is on a test clock (its frozen time). */
  | { type: 'start_call'; mode: Mode; customerId: string; reference: string; scheduleNow?: Date }
  | { type: 'end_call'; reference: string; durationSeconds: number }
  | { type: 'get_activity'; limit: number };

type CustomerWithCoverage = ReturnType<typeof customerView> & { coverage: Coverage };

/** The reply of each message. */
export interface AccountReplies {
  create_account: ReturnType<typeof adminAccountView>;
  get_account: ReturnType<typeof adminAccountView>;
  get_me: ReturnType<typeof accountView>;
  create_customer: Written<CustomerWithCoverage>;
  list_customers: List<ReturnType<typeof customerView>>;
  get_brand: ReturnType<typeof brandView>;
  update_brand: Written<ReturnType<typeof brandView>>;
  create_key: ReturnType<typeof apiKeyView>;
  list_keys: List<ReturnType<typeof apiKeyView>>;
  rotate_key: ReturnType<typeof apiKeyView>;
  revoke_key: ReturnType<typeof apiKeyView>;
  set_kyb: ReturnType<typeof adminAccountView>;
  sign_agreement: ReturnType<typeof adminAccountView>;
  get_business_details: ReturnType<typeof businessDetailsView>;
  submit_business_details: ReturnType<typeof businessDetailsView>;
  go_live: ReturnType<typeof adminAccountView>;
  set_status: ReturnType<typeof adminAccountView>;
  update_limits: ReturnType<typeof adminAccountView>;
  get_balance: Balance;
  list_usage: List<UsageEntry>;
  top_up: { object: 'top_up'; lines: UsageEntry[]; balance: Balance };
  set_auto_top_up: Balance;
  refund: { object: 'refund'; line: UsageEntry; balance: Balance };
  start_call: StartCallResult;
  end_call: EndCallResult;
  get_activity: List<{ object: 'activity'; id: string; mode: string; customer_id: string | null; kind: string; reason: string | null; reference: string | null; detail: unknown; created_at: string | null }>;
}
