/**
 * What a failed request throws: one class per error `type` of the API (as stripe-node does), each
 * carrying the error body's `type`, `code`, `message` and `request_id` and the HTTP status. A
 * `type` this version does not know yet is thrown as the base class, never lost.
 */
import type { operations } from './schema.js';

/**
 * The error body every failed request answers: `{error: {type, code, message, request_id}}`
 * (read from an answer every operation has, so it holds whatever the document names the schema).
 */
export type ErrorBody = operations['getMe']['responses'][401]['content']['application/json'];
type ErrorFields = ErrorBody['error'];
/** The error types the document knows; clients must accept new ones. */
export type ErrorType = ErrorFields['type'];
/** The error codes the document knows (docs/api.md "Error codes"); clients must accept new ones. */
export type ErrorCode = ErrorFields['code'];

/** Any failure of a request: an error answer of the API, or no answer at all (ConnectionError). */
export class VoiceApiError extends Error {
  /** The error's `type` (`invalid_request_error`, …), or `connection_error` when nothing was answered. */
  readonly type: ErrorType | 'connection_error' | (string & {});
  /** The error's `code` (`customer_not_found`, …). */
  readonly code: ErrorCode | (string & {});
  /** The `request-id` of the answer (also in the error body); undefined when nothing was answered. */
  readonly request_id: string | undefined;
  /** The HTTP status; undefined when nothing was answered. */
  readonly status: number | undefined;
  /** The answer's headers (Retry-After, x-ratelimit-*…); undefined when nothing was answered. */
  readonly headers: Headers | undefined;

  constructor(fields: { type: string; code: string; message: string; request_id?: string; status?: number; headers?: Headers; cause?: unknown }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.type = fields.type;
    this.code = fields.code;
    this.request_id = fields.request_id;
    this.status = fields.status;
    this.headers = fields.headers;
  }
}

/** `invalid_request_error`: the request was refused as sent (400, 402, 404 of a route, 413, 429…). */
export class InvalidRequestError extends VoiceApiError {}
/** `invalid_request_error` with status 429: too many requests; `retryAfterSeconds` says when to try again. */
export class RateLimitError extends InvalidRequestError {
  /** The answer's Retry-After, in seconds; undefined when it had none. */
  get retryAfterSeconds(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}
/** `authentication_error` (401): the key or session token is missing, wrong, revoked or expired. */
export class AuthenticationError extends VoiceApiError {}
/** `permission_error` (403): the key lacks a scope, the address is not allowed, the account is suspended… */
export class PermissionError extends VoiceApiError {}
/** `not_found_error` (404): no such object for this account and mode. */
export class NotFoundError extends VoiceApiError {}
/** `conflict_error` (409): the object's state does not allow it, or an Idempotency-Key was reused. */
export class ConflictError extends VoiceApiError {}
/** `api_error` (5xx): the service failed; `503 service_unavailable` is retried by the client first. */
export class ApiError extends VoiceApiError {}
/** No answer: the connection failed or dropped (after the client's own retries, where safe). */
export class ConnectionError extends VoiceApiError {}

const BY_TYPE: Record<string, new (fields: ConstructorParameters<typeof VoiceApiError>[0]) => VoiceApiError> = {
  invalid_request_error: InvalidRequestError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  not_found_error: NotFoundError,
  conflict_error: ConflictError,
  api_error: ApiError,
};

/** Retry-After of an answer in whole seconds (the API sends seconds); undefined when absent or not a number. */
export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const value = headers?.get('retry-after');
  if (value == null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/** The exception for an error answer: its body's class by `type`, or the base class for a body that is not the API's. */
export function errorFromResponse(response: Response, body: unknown): VoiceApiError {
  const fields = (body as Partial<ErrorBody> | undefined)?.error;
  const status = response.status;
  const headers = response.headers;
  const request_id = fields?.request_id ?? response.headers.get('request-id') ?? undefined;
  if (!fields || typeof fields.type !== 'string') {
    // Not the API's error shape (a proxy's page): keep what there is.
    const text = typeof body === 'string' ? body.slice(0, 200) : '';
    return new (status >= 500 ? ApiError : VoiceApiError)({ type: status >= 500 ? 'api_error' : 'unknown_error', code: `http_${status}`, message: `HTTP ${status}${text ? `: ${text}` : ''}`, request_id, status, headers });
  }
  const Class = status === 429 && fields.type === 'invalid_request_error' ? RateLimitError : (BY_TYPE[fields.type] ?? VoiceApiError);
  return new Class({ type: fields.type, code: fields.code, message: fields.message, request_id, status, headers });
}
