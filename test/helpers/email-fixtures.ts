import type { ComposeInput } from '../../email/compose.ts';
import type { EmailKind } from '../../runtime/types.ts';
import { emailBrand } from '../../actors/email/brand.ts';
import type { EmailAccount } from '../../db/email-outbox.ts';
import type { buildBalance } from '../../money/balance-view.ts';
import type { LowBalanceStage } from '../../money/rules/low-balance.ts';
import { CALL_TIERS, ITEM_PRICES, MINIMUM_TOP_UP_CENTS, estimatedCallMinutes, rateAt } from '../../money/rules/pricing.ts';

/** A reseller with a whole brand (yellow band that needs black text, a dark button that needs white), for template tests. */
export const HARBOURLINE: EmailAccount = {
  name: 'Harbourline Leads LLC',
  display_name: 'Harbourline',
  logo_url: null,
  primary_color: '#ffcc00',
  accent_color: '#0a3d62',
  email_from_name: 'Harbourline Team',
  support_email: 'help@harbourline.example',
};

/** What the sender would hand `composeEmail` for a row of `kind` of Harbourline's. */
export function composeInput(kind: EmailKind, data: Record<string, unknown>, over: Partial<ComposeInput> & { account?: EmailAccount } = {}): ComposeInput {
  const { account = HARBOURLINE, ...rest } = over;
  return {
    id: '0b0c6a52-7d0c-4a53-9b8f-1a2b3c4d5e6f',
    kind,
    mode: 'live',
    data,
    secret: null,
    to: ['person@harbourline.example'],
    platform: { name: 'Switchboard', from: 'no-reply@switchboard.example', publicUrl: 'https://console.switchboard.example' },
    accountName: account.name,
    brand: emailBrand(account),
    ...rest,
  };
}

/** An onboarding link email to Bright Dental in `language`. */
export const onboardingInput = (language: string, over: Partial<ComposeInput> & { account?: EmailAccount } = {}) =>
  composeInput('onboarding_link', { customer_name: 'Bright Dental', link_id: 'l1', expires_at: '2026-12-27T10:00:00.000Z', language }, {
    secret: 'https://calls.harbourline.example/onboarding/ob_0123456789abcdefghijklmnopqrst012345',
    to: ['owner@bright-dental.example'],
    mode: 'test',
    ...over,
  });

/**
 * The data of a real `balance.low` event (money/writer recordLowBalance: the balance view with the
 * stage crossed): typed as `buildBalance`'s result, so the template is fed the shape events carry
 * (the minutes estimate under `rates`, not at the top level).
 */
export function balanceLowData(availableCents: number, stage: LowBalanceStage, over: { auto_top_up?: { threshold_cents: number; amount_cents: number | null } | null } = {}) {
  const minutesUsed = 0;
  const data: Awaited<ReturnType<typeof buildBalance>> = {
    object: 'balance',
    currency: 'usd',
    mode: 'live',
    available_cents: availableCents,
    balance_cents: availableCents,
    paid_cents: availableCents,
    bonus_cents: 0,
    bonus_expires_at: null,
    reserved_cents: 0,
    minimum_top_up_cents: MINIMUM_TOP_UP_CENTS,
    low_balance: stage,
    rates: {
      call_cents_per_minute: rateAt(minutesUsed),
      minutes_used_this_month: minutesUsed,
      estimated_call_minutes_remaining: estimatedCallMinutes(availableCents, minutesUsed),
      number_cents_per_month: ITEM_PRICES.number_cents_per_month,
      caller_id_cents_per_month: ITEM_PRICES.caller_id_cents_per_month,
      chat_message_cents: ITEM_PRICES.chat_message_cents,
      prospect_cents: ITEM_PRICES.prospect_cents,
      website_build_cents: ITEM_PRICES.website_build_cents,
      website_hosting_cents_per_month: ITEM_PRICES.website_hosting_cents_per_month,
      call_tiers: CALL_TIERS.map((t) => ({ ...t })),
    },
    spend: { today_cents: 0, month_cents: 0, daily_cap_cents: null, monthly_cap_cents: null },
    auto_top_up: over.auto_top_up ?? null,
  };
  return { ...data, event_id: 'evt_1' } as Record<string, unknown>;
}
