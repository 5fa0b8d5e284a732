/**
 * Shapes of the console's JSON answers, from the server's TypeBox schemas (`import type`, erased
 * at build) so the two cannot drift.
 */
import type { Static } from 'typebox';
import type { CustomerSchema, ReadinessSchema, ProvisioningSchema, OnboardingLinkSchema, CustomerLimitsSchema } from '../../http/schemas/customers.ts';
import type { CallSchema } from '../../http/schemas/calls.ts';
import type { BalanceSchema, UsageEntrySchema } from '../../http/schemas/money.ts';
import type { BrandSchema, BrandDomainSchema } from '../../http/schemas/account.ts';
import type { NumberSchema } from '../../http/schemas/numbers.ts';
import type { WebsiteSchema } from '../../http/schemas/websites.ts';
import type { ChatSessionSchema } from '../../http/schemas/chat.ts';
import type { ConsoleSessionSchema, InvitationPeekSchema, ConsoleInvitationSchema } from '../../http/schemas/console.ts';
import type { MemberSchema, PasswordResetLinkSchema, SessionEntrySchema, TeamSchema, TwoFactorSetupSchema } from '../../http/schemas/console-access.ts';
import type {
  AgreementSchema,
  BusinessDetailsFieldsSchema,
  BusinessDetailsSchema,
  ConsoleApiKeySchema,
  ConsoleEventSchema,
  GoingLiveSchema,
  GoingLiveStepSchema,
  WebhookAttemptSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
} from '../../http/schemas/console-devs.ts';
import type { CustomerTestClockSchema, TestClockSchema } from '../../http/schemas/test-clocks.ts';
import type { ActivitySchema, ConsoleOverviewSchema } from '../../http/schemas/console-billing.ts';
import type { ConsoleAppointmentSchema, ConsoleCallPageSchema, TrailEntrySchema } from '../../http/schemas/console-calls.ts';
import type { ConsoleCreatedCustomerSchema, ConsoleCustomerPageSchema, ConsoleCustomerSchema } from '../../http/schemas/console-customers.ts';
import type { CardPaymentSchema, CreatedTopUpSchema, PaymentsSetupSchema } from '../../http/schemas/console-payments.ts';
import type { SimulatedCheckoutSchema } from '../../http/routes/console-simulated-checkout.ts';

export type Mode = 'test' | 'live';

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export type ConsoleSession = Static<typeof ConsoleSessionSchema>;
export type InvitationPeek = Static<typeof InvitationPeekSchema>;
export type ConsoleInvitation = Static<typeof ConsoleInvitationSchema>;
export type TwoFactorSetup = Static<typeof TwoFactorSetupSchema>;
export type PasswordResetLink = Static<typeof PasswordResetLinkSchema>;
export type SessionRow = Static<typeof SessionEntrySchema>;
export type TeamMember = Static<typeof MemberSchema>;
export type Team = Static<typeof TeamSchema>;

export type Customer = Static<typeof CustomerSchema>;
export type Readiness = Static<typeof ReadinessSchema>;
export type Provisioning = Static<typeof ProvisioningSchema>;
export type OnboardingLink = Static<typeof OnboardingLinkSchema>;
export type CustomerLimits = Static<typeof CustomerLimitsSchema>;
export type PhoneNumber = Static<typeof NumberSchema>;
export type Website = Static<typeof WebsiteSchema>;
export type ChatSession = Static<typeof ChatSessionSchema>;
export type Call = Static<typeof CallSchema>;
export type Balance = Static<typeof BalanceSchema>;
export type Brand = Static<typeof BrandSchema>;
export type BrandDomain = Static<typeof BrandDomainSchema>;

export type Overview = Static<typeof ConsoleOverviewSchema>;
export type CallsByDay = Overview['calls_by_day'][number];
export type LedgerEntry = Static<typeof UsageEntrySchema>;
export type ActivityEntry = Static<typeof ActivitySchema>;
export type CallPage = Static<typeof ConsoleCallPageSchema>;
export type TrailStep = Static<typeof TrailEntrySchema>;
export type AppointmentRow = Static<typeof ConsoleAppointmentSchema>;

export type ConsoleApiKey = Static<typeof ConsoleApiKeySchema>;
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
export type DeliveryAttempt = Static<typeof WebhookAttemptSchema>;
export type ConsoleEvent = Static<typeof ConsoleEventSchema>;
export type GoingLive = Static<typeof GoingLiveSchema>;
export type GoingLiveStep = Static<typeof GoingLiveStepSchema>;
export type BusinessDetails = Static<typeof BusinessDetailsSchema>;
export type BusinessDetailsFields = Static<typeof BusinessDetailsFieldsSchema>;
export type Agreement = Static<typeof AgreementSchema>;
export type TestClock = Static<typeof TestClockSchema>;
export type CustomerTestClock = Static<typeof CustomerTestClockSchema>;

export type CustomerRow = Static<typeof ConsoleCustomerSchema>;
export type CustomerPage = Static<typeof ConsoleCustomerPageSchema>;
export type CreatedCustomer = Static<typeof ConsoleCreatedCustomerSchema>;
/** A readiness blocker in the console's words (who must act, what to do, where). */
export type Blocker = CustomerPage['readiness']['blockers'][number];

export type CardPayment = Static<typeof CardPaymentSchema>;
/** The answer of POST /billing/top_ups: the payment and where the browser pays it. */
export type CreatedTopUp = Static<typeof CreatedTopUpSchema>;
export type PaymentsSetup = Static<typeof PaymentsSetupSchema>;
export type BonusTier = PaymentsSetup['bonus_tiers'][number];
export type SavedCard = NonNullable<PaymentsSetup['saved_card']>;
export type CardBrief = NonNullable<CardPayment['card']>;
export type SimulatedCheckout = Static<typeof SimulatedCheckoutSchema>;
