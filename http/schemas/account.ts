import { Type, Nullable, NullableString, NullableInteger, NullableTimestamp, Timestamp, ModeSchema, withCode, StringEnum } from './common.ts';
import { SCOPES } from '../../actors/account/api-key-rules.ts';

export const AccountSchema = Type.Object({
  object: Type.Literal('account'),
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  status: StringEnum(['active', 'suspended'], 'active, suspended'),
  mode: ModeSchema,
  country: Type.String(),
  onboarding: Type.Object({
    kyb_status: StringEnum(['pending', 'verified', 'rejected'], 'pending, verified, rejected'),
    agreement_signed: Type.Boolean(),
    agreement_version: NullableString,
  }),
  key: Type.Object({
    id: Type.String(),
    mode: { ...ModeSchema, description: "the calling key's mode (the account's own `mode` is whether it has gone live)" },
    label: Type.String(),
    prefix: Type.String(),
    last_four: Type.String(),
    scopes: Type.Array(StringEnum(SCOPES, 'a scope the key holds')),
    expires_at: NullableTimestamp,
  }),
  limits: Type.Object({
    requests_per_minute: Type.Integer(),
    burst: Type.Integer(),
    concurrent_calls: Type.Integer(),
    max_customers: NullableInteger,
  }),
  customers: Type.Object({ count: Type.Integer({ minimum: 0 }) }),
}, { $id: 'Account' });

/** The brand domain's DNS state (issue 21; docs/api.md, "Brand domain"). */
export const BrandDomainSchema = Type.Object({
  object: Type.Literal('brand_domain'),
  domain: NullableString,
  status: StringEnum(
    ['none', 'pending', 'verified', 'failed'],
    'none (no domain), pending (waiting for the CNAME), verified (customers are sent here), failed (not pointed 7 days after it was set, or no longer pointed)',
  ),
  cname_target: Type.Union([Type.String(), Type.Null()], { description: 'what the domain must be a CNAME of; null without a domain or when the service has no sites domain' }),
  checked_at: NullableTimestamp,
  verified_at: NullableTimestamp,
});

export const BrandSchema = Type.Object({
  object: Type.Literal('brand'),
  display_name: NullableString,
  logo_url: NullableString,
  primary_color: NullableString,
  accent_color: NullableString,
  email_from_name: NullableString,
  support_email: NullableString,
  domain: NullableString,
  domain_status: { ...BrandDomainSchema, description: "the domain's DNS state: customer-facing URLs use https://<domain> only once it is verified" },
}, { $id: 'Brand' });

const BrandText = (maxLength: number) => Type.Optional(withCode(Nullable(Type.String({ maxLength })), 'invalid_brand_field'));
/** A colour longer than #RRGGBB is still "not hex", not "too long". */
const BrandColour = Type.Optional(withCode(Nullable(Type.String({ maxLength: 7 })), { default: 'invalid_brand_field', maxLength: 'invalid_brand_field' }));

export const BrandBody = Type.Object(
  {
    display_name: BrandText(200),
    logo_url: BrandText(2048),
    primary_color: BrandColour,
    accent_color: BrandColour,
    email_from_name: BrandText(200),
    support_email: BrandText(254),
    domain: BrandText(253),
  },
  { additionalProperties: false, examples: [{ display_name: 'Northwind Calls', primary_color: '#123456', support_email: 'help@northwind.example' }] },
);

export const AdminAccountSchema = Type.Object({
  object: Type.Literal('account'),
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  status: Type.String(),
  mode: ModeSchema,
  country: Type.String(),
  onboarding: Type.Object({
    kyb_status: Type.String(),
    kyb_note: Nullable(Type.String({ description: "the operator's word on the last review, shown to the reseller" })),
    agreement_signed: Type.Boolean(),
    agreement_version: NullableString,
    agreement_signed_at: NullableTimestamp,
    agreement_history: Type.Array(
      Type.Object({ version: Type.String(), signed_at: Timestamp, signed_by: Nullable(Type.String({ description: 'the console person who signed; null when the operator recorded it' })) }),
      { description: 'every signature of the agreement, newest first; re-signing the version on file adds none' },
    ),
  }),
  went_live_at: NullableTimestamp,
  limits: Type.Object({
    requests_per_minute: Type.Integer(),
    burst: Type.Integer(),
    concurrent_calls: Type.Integer(),
    max_customers: NullableInteger,
    daily_spend_cap_cents: NullableInteger,
    monthly_spend_cap_cents: NullableInteger,
  }),
  created_at: Timestamp,
});

export const ApiKeySchema = Type.Object({
  object: Type.Literal('api_key'),
  id: Type.String(),
  account_id: Type.String(),
  mode: ModeSchema,
  label: Type.String(),
  prefix: Type.String(),
  last_four: Type.String(),
  scopes: Type.Array(Type.String()),
  ip_allowlist: Nullable(Type.Array(Type.String())),
  expires_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
  rotated_at: NullableTimestamp,
  created_at: Timestamp,
  secret: Type.Optional(Type.String({ description: 'shown once, on create and rotate' })),
});
