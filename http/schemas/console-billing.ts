import { ModeSchema, Nullable, Timestamp, Type, type Static } from './common.ts';
import { BalanceSchema } from './money.ts';

import { CONSOLE_PAGE, ConsoleModeSchema } from './console.ts';

export { ConsoleModeQuery } from './console.ts';
const ModeQuery = { mode: Type.Optional(ConsoleModeSchema) };

const LedgerFilters = {
  ...ModeQuery,
  customer_id: Type.Optional(Type.String({ maxLength: 255, description: 'service id or external_ref of a customer of this mode' })),
  type: Type.Optional(Type.Union(['usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired', 'top_up_refund'].map((t) => Type.Literal(t)))),
  from: Type.Optional({ ...Timestamp, description: 'lines at or after this instant' }),
  to: Type.Optional({ ...Timestamp, description: 'lines before this instant' }),
};
export const LedgerQuerySchema = Type.Object({ ...CONSOLE_PAGE, ...LedgerFilters }, { additionalProperties: false });
export const LedgerCsvQuerySchema = Type.Object(LedgerFilters, { additionalProperties: false });
export const ActivityQuerySchema = Type.Object({ ...CONSOLE_PAGE, ...ModeQuery }, { additionalProperties: false });

export const ActivitySchema = Type.Object({
  object: Type.Literal('activity'),
  id: Type.String(),
  mode: ModeSchema,
  customer_id: Nullable(Type.String()),
  kind: Type.String({ description: 'call_start_refused, hold_released' }),
  reason: Nullable(Type.String({ description: 'insufficient_balance, spend caps, concurrency_limit, platform_at_capacity, call_never_reported_back…' })),
  reference: Nullable(Type.String()),
  detail: Type.Unknown(),
  created_at: Timestamp,
});

const Spend = Type.Object({
  today_cents: Type.Integer(),
  month_cents: Type.Integer(),
  daily_cap_cents: Nullable(Type.Integer()),
  monthly_cap_cents: Nullable(Type.Integer()),
});

export const ConsoleOverviewSchema = Type.Object({
  object: Type.Literal('console_overview'),
  mode: ModeSchema,
  /** Null for a role without billing:read (developer): the money block is not shown. */
  balance: Type.Union([BalanceSchema, Type.Null()]),
  low_balance_stage: Nullable(Type.String()),
  spend: Type.Union([Spend, Type.Null()]),
  calls_by_day: Type.Array(Type.Object({ date: Type.String(), placed: Type.Integer(), connected: Type.Integer(), appointments: Type.Integer() })),
  blocked_customer_count: Type.Integer(),
  blocked_customers: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      blockers: Type.Array(Type.Object({ code: Type.String(), message: Type.String(), waiting_on: Type.String() })),
    }),
  ),
});
export type ConsoleOverview = Static<typeof ConsoleOverviewSchema>;
