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
import type { ApiKeySchema } from '../../http/schemas/account.ts';
import type { ComplianceRecordSchema } from '../../http/schemas/calls.ts';
import type { ConsoleSessionSchema, InvitationPeekSchema, ConsoleInvitationSchema } from '../../http/schemas/console.ts';
import type { Role } from './permissions.ts';

export type Mode = 'test' | 'live';

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export type ConsoleSession = Static<typeof ConsoleSessionSchema>;
export type InvitationPeek = Static<typeof InvitationPeekSchema>;
export type ConsoleInvitation = Static<typeof ConsoleInvitationSchema>;

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

export type ApiKey = Static<typeof ApiKeySchema>;
export type ComplianceRecord = Static<typeof ComplianceRecordSchema>;
/** The console's key: the API key plus until when a rotated-out secret works. */
export type ConsoleApiKey = ApiKey & { previous_secret_expires_at: string | null };

/** A console list row of customers: the /v1 shape plus readiness at a glance. */
export type CustomerRow = Customer & { ready?: boolean; blocker_count?: number };

export interface CustomerPage {
  customer: Customer;
  readiness: Readiness;
  provisioning: Provisioning;
  limits: CustomerLimits;
  onboarding_links: OnboardingLink[];
  numbers: PhoneNumber[];
  websites: Website[];
  chat_sessions: ChatSession[];
  test_clock?: string | null;
}

export interface TrailStep {
  gate: string;
  passed: boolean;
  at: string | null;
  detail: string | Record<string, unknown> | null;
}

export interface TranscriptTurn {
  role?: string;
  speaker?: string;
  text?: string;
  content?: string;
  at?: string;
}

export interface CallPage {
  call: Call;
  transcript: TranscriptTurn[] | { turns?: TranscriptTurn[] } | null;
  compliance_trail: TrailStep[];
  appointment?: Appointment | null;
}

export type AppointmentRow = Appointment & { customer_timezone?: string; customer_name?: string };

export interface LedgerEntry {
  id: string;
  object?: string;
  type: string;
  cause?: string;
  amount_cents: number;
  balance_after_cents?: number;
  customer_id?: string | null;
  call_id?: string | null;
  description?: string | null;
  created_at: string;
}

export interface ActivityEntry {
  id: string;
  object?: string;
  kind?: string;
  type?: string;
  code?: string;
  reason?: string;
  message?: string;
  customer_id?: string | null;
  call_request_id?: string | null;
  amount_cents?: number | null;
  created_at: string;
}

export interface WebhookEndpoint {
  object: 'webhook_endpoint';
  id: string;
  mode: Mode;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  previous_secret_expires_at: string | null;
  created_at: string;
  secret?: string;
}

export interface DeliveryAttempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_excerpt?: string | null;
}

export interface WebhookDelivery {
  object: 'webhook_delivery';
  id: string;
  event_id: string;
  event_type: string | null;
  endpoint_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  attempt_log: DeliveryAttempt[];
  created_at: string;
}

export interface ConsoleEvent {
  id: string;
  object: 'event';
  type: string;
  mode: Mode;
  created_at: string;
  data: unknown;
}

export interface GoingLiveStep {
  key: 'business_verification' | 'agreement' | 'funds' | 'approval';
  done: boolean;
  detail: string;
  who: 'you' | 'operator';
}

export interface GoingLive {
  steps: GoingLiveStep[];
  live: boolean;
}

export interface BusinessDetailsFields {
  legal_name: string;
  registration_number: string;
  country: string;
  address: string;
  website: string | null;
  contact_email: string;
  contact_phone: string | null;
  business_description: string;
}

export interface BusinessDetails {
  object: 'business_details';
  kyb_status: string;
  review_note: string | null;
  submitted: boolean;
  submitted_at: string | null;
  submitted_by: string | null;
  details: BusinessDetailsFields | null;
}

export interface Agreement {
  version: string;
  text: string;
  signed: null | { version: string; signed_at: string; signed_by: string | null };
}

export interface TestClock {
  object: 'test_clock';
  id: string;
  name: string | null;
  frozen_time: string;
  status: 'ready' | 'advancing';
  customer_count: number;
  created_at: string;
}

export interface TeamMember {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  two_factor_enabled: boolean;
  created_at?: string;
  last_sign_in_at?: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  created_at?: string;
  url?: string;
  status?: string;
}

export interface Team {
  require_two_factor: boolean;
  members: TeamMember[];
  invitations: Invitation[];
}

export interface SessionRow {
  object: 'console_session_entry';
  id: string;
  user_id: string;
  email: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  current: boolean;
}
