import { Type, Nullable, NullableString, NullableTimestamp, Timestamp, StringEnum, NullableEnum } from './common.ts';
import { OnboardingLinkBody } from './customers.ts';

/** GET /v1/customers/{id}/calendar (issue 24): the connection's state, never its credentials. */
export const CalendarConnectionSchema = Type.Object({
  object: Type.Literal('calendar_connection'),
  customer_id: Type.String(),
  status: StringEnum(
    ['not_connected', 'working', 'failing'],
    'not_connected: never connected (or disconnected); working: the last check passed; failing: it stopped working (failure says why) and no times are offered from it',
  ),
  kind: NullableEnum(
    ['caldav', 'google', 'microsoft', 'simulated'],
    'caldav (an address, user name and app password), google, microsoft, or simulated (test mode); null when not connected',
  ),
  label: { ...NullableString, description: "what the customer recognises it by: the calendar's address (no user name or password) or the account's email" },
  connected_at: NullableTimestamp,
  checked_at: { ...NullableTimestamp, description: 'the last check (on connect, then every 6 hours; every 15 minutes while failing)' },
  failure: Nullable(
    Type.Object({
      code: StringEnum(['calendar_auth_failed', 'calendar_unavailable'], 'calendar_auth_failed (the password was changed or access withdrawn) or calendar_unavailable (unreachable three checks in a row)'),
      message: Type.String({ description: 'why, for a person' }),
    }),
  ),
}, { $id: 'CalendarConnection' });

export const CalendarLinkSchema = Type.Object({
  object: Type.Literal('calendar_link'),
  customer_id: Type.String(),
  prefix: Type.String({ description: "the token's first characters, to tell links apart" }),
  url: Type.Optional(Type.String({ description: 'only on the mint response; shown once' })),
  expires_at: Timestamp,
  emailed_to: { ...NullableString, description: 'the address the link was emailed to on your behalf, or null' },
}, { $id: 'CalendarLink' });

/** The mint request: optionally, an address to email the link to on the reseller's behalf. */
export const CalendarLinkBody = Type.Object(
  { email: Type.Optional({ ...OnboardingLinkBody.properties.email, description: "the customer's address: the link is emailed there on your behalf" }) },
  { additionalProperties: false, examples: [{ email: 'owner@brightdental.example' }] },
);
