import { Nullable, Type, withCode, type Static } from './common.ts';
import { CoverageSchema, CreateCustomerBody, CustomerLimitsBody, CustomerLimitsSchema, CustomerSchema, OnboardingLinkBody, OnboardingLinkSchema, ProvisioningSchema, ReadinessSchema, UpdateCustomerBody } from './customers.ts';
import { NumberSchema } from './numbers.ts';
import { WebsiteSchema } from './websites.ts';
import { ChatSessionSchema } from './chat.ts';
import { TestClockSchema } from './test-clocks.ts';
import { CUSTOMER_LIST_FILTERS } from '../../actors/customer/customer-list.ts';

/*
 * Schemas of the console's customer routes (/console/api/customers…). The web app imports their
 * types (`import type`, Static<…>).
 */

import { CONSOLE_PAGE, ConsoleModeSchema } from './console.ts';

export { CONSOLE_PAGE_LIMIT, ConsoleModeSchema, ConsoleModeQuery, ConsoleModeBody } from './console.ts';

/** Minting an onboarding link in the console: the mode, and optionally the customer's address to email it to ("Send by email"). */
export const ConsoleOnboardingLinkBody = Type.Object({ mode: Type.Optional(ConsoleModeSchema), email: OnboardingLinkBody.properties.email }, { additionalProperties: false });

export const ConsoleCustomerListQuery = Type.Object(
  {
    ...CONSOLE_PAGE,
    mode: Type.Optional(ConsoleModeSchema),
    status: Type.Optional(
      withCode(Type.Union(CUSTOMER_LIST_FILTERS.map((f) => Type.Literal(f))), 'invalid_parameter'),
    ),
  },
  { additionalProperties: false },
);

export const ConsoleCustomerSchema = Type.Object({
  ...CustomerSchema.properties,
  ready: Type.Boolean({ description: "ready for its own calls (a test customer: test calls; a live one: live calls)" }),
  blocker_count: Type.Integer({ description: 'how many blockers stand in the way of those calls' }),
});

export const ConsoleCreateCustomerBody = Type.Object(
  {
    ...CreateCustomerBody.properties,
    mode: Type.Optional(ConsoleModeSchema),
    test_clock: Type.Optional(Nullable(withCode(Type.String({ maxLength: 64, description: 'a test clock of the account to put the new test customer on' }), 'invalid_parameter'))),
  },
  { additionalProperties: false },
);

/** The answer of POST /v1/customers, plus the test clock the customer was put on when one was sent. */
export const ConsoleCreatedCustomerSchema = Type.Object({
  ...CustomerSchema.properties,
  coverage: CoverageSchema,
  test_clock: Type.Optional(Nullable(Type.String())),
});

export const ConsoleLimitsBody = Type.Object({ ...CustomerLimitsBody.properties, mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });

/** The customer page's "Calls" form: the body of PATCH /v1/customers/{id} (registered name, call settings) plus `mode`. */
export const ConsoleUpdateCustomerBody = Type.Object({ ...UpdateCustomerBody.properties, mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });


const ConsolePlaceSchema = Type.Object({ label: Type.String(), path: Type.String({ description: 'the console page, /console/…' }) });

/** A readiness blocker as /v1 answers it, plus the console's words. */
const ConsoleBlockerSchema = Type.Object({
  ...ReadinessSchema.properties.blockers.items.properties,
  who: Type.Union([Type.Literal('you'), Type.Literal('your_customer'), Type.Literal('operator')], { description: 'who must act' }),
  who_label: Type.String({ description: 'You, Your customer, The operator' }),
  what_to_do: Type.String(),
  where: Nullable(ConsolePlaceSchema),
});

export const ConsoleReadinessSchema = Type.Object({
  ...ReadinessSchema.properties,
  blockers: Type.Array(ConsoleBlockerSchema),
  test_blockers: Type.Array(ConsoleBlockerSchema),
});

/** An onboarding link on the customer's page: never its URL (only the mint answer has it). */
const PageOnboardingLinkSchema = Type.Omit(OnboardingLinkSchema, ['url', 'expires_in_days']);
/** A chat session on the customer's page: never its token. */
const PageChatSessionSchema = Type.Omit(ChatSessionSchema, ['token', 'expires_in_seconds']);

export const ConsoleCustomerPageSchema = Type.Object({
  object: Type.Literal('console_customer'),
  customer: CustomerSchema,
  readiness: ConsoleReadinessSchema,
  provisioning: ProvisioningSchema,
  limits: CustomerLimitsSchema,
  onboarding_links: Type.Array(PageOnboardingLinkSchema, { description: 'every link minted for the customer, newest first' }),
  numbers: Type.Array(NumberSchema, { description: 'the newest 100' }),
  websites: Type.Array(WebsiteSchema, { description: 'the newest 100 builds' }),
  chat_sessions: Type.Array(PageChatSessionSchema, { description: 'the newest 20' }),
  test_clock: { ...Nullable(TestClockSchema), description: 'the test clock the customer is on (test mode only), or null' },
});
export type ConsoleCustomerPage = Static<typeof ConsoleCustomerPageSchema>;
export type ConsoleCustomer = Static<typeof ConsoleCustomerSchema>;
