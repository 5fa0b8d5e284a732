import { Nullable, NullableString, ModeSchema, Timestamp, Type, StringEnum } from './common.ts';
import { CustomerIdParams } from './customers.ts';

export const WEBSITE_STATUSES = ['building', 'ready', 'live', 'failed', 'cancelled', 'hosting_due', 'suspended', 'purged'] as const;
const Day = Type.String({ format: 'date', description: 'a UTC calendar day, YYYY-MM-DD' });

export const WebsiteSchema = Type.Object(
  {
    object: Type.Literal('website_build'),
    id: Type.String({ format: 'uuid', description: "the spec's build_id" }),
    customer_id: Type.String({ format: 'uuid' }),
    status: StringEnum(
      WEBSITE_STATUSES,
      'building, ready (to review at preview_url), live, failed (fee refunded), cancelled, hosting_due (unpaid: still served until suspend_due_on), suspended (offline until purge_due_on), purged',
    ),
    preview_url: Nullable(Type.String({ description: 'while the preview is open (30 days after the build or a re-issue, until a live site is published): unlisted, never indexed' })),
    preview_expires_at: Nullable(Timestamp),
    url: Nullable(Type.String({ description: "the address once live; a test site's is its preview (test sites are served nowhere else)" })),
    domain: NullableString,
    domain_verified: Type.Boolean({ description: "true once the domain's CNAME points at the site (checked by DNS)" }),
    brief: NullableString,
    revisions_included: Type.Integer(),
    revisions_used: Type.Integer(),
    build_fee_cents: Type.Integer(),
    hosting_cents_per_month: Type.Integer(),
    hosting_renews_on: Nullable(Day),
    suspend_due_on: Nullable(Day),
    purge_due_on: Nullable(Day),
    live_at: Nullable(Timestamp),
    failure_reason: NullableString,
    mode: ModeSchema,
    created_at: Timestamp,
  },
  { $id: 'WebsiteBuild' },
);

export const DnsRecordSchema = Type.Object(
  {
    object: Type.Literal('dns_record'),
    type: Type.Literal('CNAME'),
    name: Type.String({ description: "the customer's domain" }),
    value: Type.String({ description: 'what it points at' }),
  },
  { $id: 'DnsRecord' },
);

export const WebsiteParams = Type.Object({
  id: CustomerIdParams.properties.id,
  build_id: Type.String({ minLength: 1, maxLength: 255, description: 'the id of the website build' }),
});

const Brief = Type.String({ minLength: 1, maxLength: 4000, description: 'what the reseller wants on the page, in its own words' });

export const WebsiteOrderBody = Type.Object({ brief: Type.Optional(Brief) }, { additionalProperties: false, examples: [{ brief: 'Family dental practice; highlight evening appointments and emergency care.' }] });
export const RevisionBody = Type.Object({ brief: Brief }, { additionalProperties: false, examples: [{ brief: 'Put the opening hours higher up and mention free parking.' }] });
export const DomainBody = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 253, description: "the customer's own host name, e.g. www.brightdental.com" }),
    replace: Type.Optional(Type.Boolean({ description: 'true to replace the domain the site already has (otherwise 409 domain_already_set)' })),
  },
  { additionalProperties: false, examples: [{ domain: 'www.brightdental.com' }] },
);
export const EmptyBody = Type.Object({}, { additionalProperties: false, examples: [{}] });
