/**
 * Shapes of the console's JSON answers. Where the server declares a TypeBox schema the type comes
 * from it (`import type`, erased at build), so the two cannot drift.
 */
import type { Static } from 'typebox';
import type { CustomerSchema, ReadinessSchema, ProvisioningSchema, OnboardingLinkSchema, CustomerLimitsSchema } from '../../http/schemas/customers.ts';
import type { CallSchema, AppointmentSchema } from '../../http/schemas/calls.ts';
import type { BalanceSchema } from '../../http/schemas/money.ts';
import type { BrandSchema } from '../../http/schemas/account.ts';
import type { NumberSchema } from '../../http/schemas/numbers.ts';
import type { WebsiteSchema } from '../../http/schemas/websites.ts';
import type { ChatSessionSchema } from '../../http/schemas/chat.ts';
import type { Role } from './permissions.ts';

export type Mode = 'test' | 'live';

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export interface ConsoleSession {
  object: 'console_session';
  user: { id: string; email: string; name: string | null; role: Role; two_factor_enabled: boolean };
  account: { id: string; name: string; mode: Mode; status: string; kyb_status: string; require_two_factor: boolean };
  csrf_token: string;
}

export type Customer = Static<typeof CustomerSchema>;
export type Readiness = Static<typeof ReadinessSchema>;
export type Provisioning = Static<typeof ProvisioningSchema>;
export type OnboardingLink = Static<typeof OnboardingLinkSchema>;
export type CustomerLimits = Static<typeof CustomerLimitsSchema>;
export type Call = Static<typeof CallSchema>;
export type Appointment = Static<typeof AppointmentSchema>;
export type Balance = Static<typeof BalanceSchema>;
export type Brand = Static<typeof BrandSchema>;
export type PhoneNumber = Static<typeof NumberSchema>;
export type Website = Static<typeof WebsiteSchema>;
export type ChatSession = Static<typeof ChatSessionSchema>;

export interface CallsByDay {
  date: string;
  placed: number;
  connected: number;
  appointments: number;
}

export interface Blocker {
  code: string;
  message: string;
  waiting_on: string;
}

export interface Overview {
  balance: Balance;
  low_balance_stage: string;
  spend: { today_cents: number; month_cents: number; daily_cap_cents: number | null; monthly_cap_cents: number | null };
  calls_by_day: CallsByDay[];
  blocked_customers: { id: string; name: string; blockers: Blocker[] }[];
}
