import { Type, Nullable, NullableString, NullableInteger, NullableTimestamp, Timestamp, ModeSchema, StringEnum } from './common.ts';
import { LOW_BALANCE_STAGES } from '../../money/rules/low-balance.ts';

export const BalanceSchema = Type.Object({
  object: Type.Literal('balance'),
  currency: Type.Literal('usd'),
  mode: ModeSchema,
  available_cents: Type.Integer({ description: 'what the next call can draw on: balance minus holds of running calls' }),
  balance_cents: Type.Integer(),
  paid_cents: Type.Integer({ description: 'cash part of the balance' }),
  bonus_cents: Type.Integer({ description: 'bonus credit, spent before cash' }),
  bonus_expires_at: NullableTimestamp,
  reserved_cents: Type.Integer({ description: 'held against running calls' }),
  minimum_top_up_cents: Type.Integer(),
  low_balance: StringEnum(LOW_BALANCE_STAGES, 'ok, below_25_percent, below_10_percent, zero'),
  rates: Type.Object({
    call_cents_per_minute: Type.Integer(),
    minutes_used_this_month: Type.Integer(),
    estimated_call_minutes_remaining: Type.Integer(),
    number_cents_per_month: Type.Integer(),
    caller_id_cents_per_month: Type.Integer(),
    chat_message_cents: Type.Integer(),
    prospect_cents: Type.Integer(),
    website_build_cents: Type.Integer(),
    website_hosting_cents_per_month: Type.Integer(),
    call_tiers: Type.Array(Type.Object({ from_minutes: Type.Integer(), cents_per_minute: Type.Integer() })),
  }),
  spend: Type.Object({
    today_cents: Type.Integer(),
    month_cents: Type.Integer(),
    daily_cap_cents: NullableInteger,
    monthly_cap_cents: NullableInteger,
  }),
  auto_top_up: Nullable(Type.Object({ threshold_cents: Type.Integer(), amount_cents: NullableInteger })),
}, { $id: 'Balance' });

export const UsageEntrySchema = Type.Object({
  object: Type.Literal('usage_entry'),
  id: Type.String(),
  type: StringEnum(['usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired', 'top_up_refund'], 'usage, top_up, bonus, refund, minimum, bonus_expired, top_up_refund'),
  cause: StringEnum(
    ['call', 'chat_message', 'number', 'caller_id', 'prospect', 'website_build', 'website_hosting', 'top_up', 'bonus', 'refund', 'monthly_minimum', 'bonus_expiry', 'bonus_forfeited', 'top_up_refund'],
    'call, chat_message, number, caller_id, prospect, website_build, website_hosting, top_up, bonus, refund, monthly_minimum, bonus_expiry, bonus_forfeited, top_up_refund',
  ),
  amount_cents: Type.Integer(),
  currency: Type.Literal('usd'),
  balance_after_cents: Type.Integer(),
  applied: Type.Boolean(),
  customer_id: NullableString,
  reference: NullableString,
  description: Type.String(),
  minutes: NullableInteger,
  mode: ModeSchema,
  created_at: Timestamp,
}, { $id: 'UsageEntry' });
