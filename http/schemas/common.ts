import { Type, type TSchema, type Static } from 'typebox';
import { ERRORS, type ErrorCode } from '../errors.ts';

export { Type, type Static, type TSchema };

/**
 * `schema` or null, as one schema node (`type: [t, 'null']`) rather than anyOf, so a validation
 * error points at the field itself and carries its `x-error-code`.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const s = schema as unknown as { type?: string };
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [s.type as string, 'null'] });
}

/**
 * Annotates a schema with the API error code its validation failures map to. A string applies
 * to every keyword except maxLength (always `field_too_long`); an object maps keyword → code.
 */
export function withCode<T extends TSchema>(schema: T, code: ErrorCode | Partial<Record<string, ErrorCode>>): T {
  return { ...schema, 'x-error-code': code } as T;
}

/**
 * Maxima of integers a request may carry, so that every one fits its column and stays a safe
 * integer (docs/api.md, Bodies): a count kept in a PostgreSQL `integer` column, and an amount of
 * money in cents (10,000,000,000 dollars; kept in `bigint`, and far enough below 2^53 that sums of
 * them stay exact).
 */
export const MAX_INT4 = 2_147_483_647;
export const MAX_CENTS = 1_000_000_000_000;

export const Timestamp = Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601, UTC, milliseconds' });
export const NullableTimestamp = Nullable(Timestamp);
export const NullableString = Nullable(Type.String());
export const NullableInteger = Nullable(Type.Integer());
export const ModeSchema = Type.Union([Type.Literal('test'), Type.Literal('live')]);

/** Said in the description of every enum: the service may add values (docs/api.md, "Enums"). */
export const ADDITIVE = 'More values may be added: treat one you do not know as the nearest general case, never as an error.';

/**
 * A string of known `values` as an `enum`, with the additive-change note in its description. Its
 * static type stays `string`: the values are what a client is told, not a narrowing of the code.
 */
export function StringEnum(values: readonly string[], description?: string) {
  return Type.Unsafe<string>({ type: 'string', enum: [...values], description: description ? `${description}. ${ADDITIVE}` : ADDITIVE });
}

/** `StringEnum` or null. */
export function NullableEnum(values: readonly string[], description?: string) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], enum: [...values, null], description: description ? `${description}. ${ADDITIVE}` : ADDITIVE });
}

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      type: StringEnum([...new Set(Object.values(ERRORS).map((e) => e.type))], 'the class of the error'),
      code: StringEnum(Object.keys(ERRORS) as ErrorCode[], 'stable: branch on it (each response lists the codes it carries)'),
      message: Type.String({ maxLength: 4096, description: 'for a person; may change' }),
      request_id: Type.String({ maxLength: 64, description: 'the request-id header of the answer' }),
    }),
  },
  { $id: 'Error', description: 'Every error: branch on error.code, show error.message.' },
);

/** A page of `item`s; `name` names it in the document (`CustomerList`…). */
export function ListOf<T extends TSchema>(item: T, name?: string, maxItems = 200) {
  return Type.Object(
    { object: Type.Literal('list'), data: Type.Array(item, { maxItems }), has_more: Type.Boolean() },
    name ? { $id: name } : {},
  );
}

/** Page size of every list when `limit` is not sent. */
export const DEFAULT_PAGE_LIMIT = 100;

/**
 * Query of every list: `limit` (1..200, default 100) and the `starting_after` cursor. `limit` is
 * optional on the wire: the validator fills in the default, and the document must not call it required.
 */
const PAGE_PROPERTIES = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_PAGE_LIMIT, description: 'how many objects a page holds' })),
  starting_after: Type.Optional(Type.String({ maxLength: 255, description: 'id of the last object of the previous page' })),
};
export const PageQuery = Type.Object(PAGE_PROPERTIES, { additionalProperties: false });

/** The paging query plus a list's own filters. */
export function pageQueryWith<P extends Record<string, TSchema>>(filters: P) {
  return Type.Object({ ...PAGE_PROPERTIES, ...filters }, { additionalProperties: false });
}

/** Codes every console route (auth 'session') can answer with. */
export const CONSOLE_AUTH_CODES: ErrorCode[] = ['console_session_required', 'csrf_failed', 'role_forbidden', 'two_factor_setup_required', 'reseller_suspended', 'service_unavailable', 'api_error'];

/** Codes every authenticated /v1 route can answer with. */
export const AUTH_CODES: ErrorCode[] = [
  'invalid_api_key',
  'key_revoked',
  'key_rotated',
  'key_expired',
  'ip_not_allowed',
  'reseller_suspended',
  'live_not_enabled',
  'rate_limit_exceeded',
  'service_unavailable',
  'api_error',
];

type ResponseOptions = { auth?: 'key' | 'admin' | 'session' | 'none' };

/** What `responses()` was given, kept (not enumerable) on its result so codes found later join it. */
const DECLARED = Symbol('declared responses');
type Declared = { ok: Record<number, TSchema>; codes: ErrorCode[]; opts: ResponseOptions };

/**
 * Response schemas of a route: its success status and body, and one Error schema per error
 * status, each described by the codes it carries (the OpenAPI document lists them).
 */
export function responses(ok: Record<number, TSchema>, codes: ErrorCode[], opts: ResponseOptions = {}) {
  const all = new Set<ErrorCode>(codes);
  if (opts.auth === 'key' || opts.auth === undefined) AUTH_CODES.forEach((c) => all.add(c));
  if (opts.auth === 'admin') ['admin_unauthorized', 'service_unavailable', 'api_error'].forEach((c) => all.add(c as ErrorCode));
  if (opts.auth === 'session') CONSOLE_AUTH_CODES.forEach((c) => all.add(c));
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TSchema> = { ...ok };
  for (const [status, list] of byStatus) {
    out[status] = Type.Ref('Error', { description: `error.code: ${list.join(', ')}` }) as unknown as TSchema;
  }
  Object.defineProperty(out, DECLARED, { value: { ok, codes, opts } satisfies Declared });
  return out;
}

/**
 * A route's `responses()` with more error codes: those its request validation can answer, which
 * the openapi plugin adds to every operation. Undefined for a response map `responses()` did not build.
 */
export function withMoreCodes(response: unknown, codes: Iterable<ErrorCode>): Record<number, TSchema> | undefined {
  const declared = (response as { [DECLARED]?: Declared } | undefined)?.[DECLARED];
  return declared && responses(declared.ok, [...declared.codes, ...codes], declared.opts);
}
