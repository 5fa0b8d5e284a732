import type { AccountRow, AgreementSignatureRow } from '../../db/accounts.ts';
import type { ApiKeyRow } from '../../db/api-keys.ts';
import { iso, isoNow } from '../../runtime/types.ts';
import { brandDomainView } from './brand-domain-rules.ts';

/** The `account` object of GET /v1/me, seen through the key that asked. */
export function accountView(a: AccountRow, key: ApiKeyRow, customerCount: number) {
  return {
    object: 'account' as const,
    id: a.id,
    slug: a.slug,
    name: a.name,
    status: a.status,
    mode: a.mode,
    country: a.country,
    onboarding: {
      kyb_status: a.kyb_status,
      agreement_signed: a.agreement_signed_at !== null,
      agreement_version: a.agreement_version,
    },
    key: {
      id: key.id,
      mode: key.mode,
      label: key.label,
      prefix: key.prefix,
      last_four: key.last_four,
      scopes: key.scopes,
      expires_at: iso(key.expires_at),
    },
    limits: limitsOf(a),
    customers: { count: customerCount },
  };
}

function limitsOf(a: AccountRow) {
  return {
    requests_per_minute: a.requests_per_minute,
    burst: a.burst,
    concurrent_calls: a.concurrent_calls,
    max_customers: a.max_customers,
  };
}

/** The account as the console shows it to operators; `agreementHistory` newest first. */
export function adminAccountView(a: AccountRow, agreementHistory: AgreementSignatureRow[]) {
  return {
    object: 'account' as const,
    id: a.id,
    slug: a.slug,
    name: a.name,
    status: a.status,
    mode: a.mode,
    country: a.country,
    onboarding: {
      kyb_status: a.kyb_status,
      kyb_note: a.kyb_note,
      agreement_signed: a.agreement_signed_at !== null,
      agreement_version: a.agreement_version,
      agreement_signed_at: iso(a.agreement_signed_at),
      agreement_history: agreementHistory.map((s) => ({ version: s.version, signed_at: isoNow(s.signed_at), signed_by: s.signed_by })),
    },
    went_live_at: iso(a.went_live_at),
    limits: {
      ...limitsOf(a),
      daily_spend_cap_cents: a.daily_spend_cap_cents,
      monthly_spend_cap_cents: a.monthly_spend_cap_cents,
    },
    created_at: iso(a.created_at),
  };
}

/** An API key without its secret; `secret` is added once, on create and rotate. */
export function apiKeyView(k: ApiKeyRow, secret?: string) {
  return {
    object: 'api_key' as const,
    id: k.id,
    account_id: k.account_id,
    mode: k.mode,
    label: k.label,
    prefix: k.prefix,
    last_four: k.last_four,
    scopes: k.scopes,
    ip_allowlist: k.ip_allowlist,
    expires_at: iso(k.expires_at),
    revoked_at: iso(k.revoked_at),
    rotated_at: iso(k.rotated_at),
    created_at: iso(k.created_at),
    ...(secret === undefined ? {} : { secret }),
  };
}

/** The brand, with its domain's DNS state (`domain_status`, issue 21). */
export function brandView(a: AccountRow, sitesDomain: string | undefined) {
  return {
    object: 'brand' as const,
    display_name: a.display_name,
    logo_url: a.logo_url,
    primary_color: a.primary_color,
    accent_color: a.accent_color,
    email_from_name: a.email_from_name,
    support_email: a.support_email,
    domain: a.domain,
    domain_status: brandDomainView(a, sitesDomain),
  };
}

/** What customer-facing pages show: the reseller's name, never the service's. */
export function pageBrand(a: Pick<AccountRow, 'name' | 'display_name' | 'logo_url' | 'primary_color' | 'accent_color' | 'support_email'>) {
  return {
    name: a.display_name ?? a.name,
    logoUrl: a.logo_url,
    primaryColor: a.primary_color ?? '#1f2937',
    accentColor: a.accent_color ?? '#2563eb',
    supportEmail: a.support_email,
  };
}

/** A ledger line as the reseller sees it (`usage_entry`). */
export function usageView(l: import('../../db/money/ledger.ts').LedgerRow) {
  return {
    object: 'usage_entry' as const,
    id: l.id,
    type: l.type,
    cause: l.cause,
    amount_cents: l.amount_cents,
    currency: 'usd' as const,
    balance_after_cents: l.balance_after_cents,
    applied: l.applied,
    customer_id: l.customer_id,
    reference: l.reference,
    description: l.description,
    minutes: l.minutes,
    mode: l.mode,
    created_at: iso(l.created_at),
  };
}
