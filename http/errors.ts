import { isRefusal, type RefusalCode } from '../runtime/refusal.ts';

/**
 * The one catalogue of API error codes. Nothing else creates API errors: a code missing here
 * cannot be thrown, and `docs/api.md` lists every code (a test checks). The domain refuses with
 * a `Refusal` (runtime/refusal.ts) whose code must have its entry here; the other codes are the
 * HTTP layer's own (authentication, the request's shape, the connection).
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'api_error';

interface CatalogueEntry {
  status: number;
  type: ErrorType;
  message: string;
}

const e = (status: number, type: ErrorType, message: string): CatalogueEntry => ({ status, type, message });

/** Every refusal code has its entry here (a missing one fails the type check); the other codes are HTTP's own. */
export const ERRORS = {
  // authentication (spec: Authentication)
  invalid_api_key: e(401, 'authentication_error', 'The API key is missing, malformed or unknown.'),
  key_revoked: e(401, 'authentication_error', 'This API key has been revoked.'),
  key_rotated: e(401, 'authentication_error', 'This API key secret was rotated and its grace window has closed; use the new secret.'),
  key_expired: e(401, 'authentication_error', 'This API key has expired.'),
  scope_missing: e(403, 'permission_error', 'This API key does not have the permission this request needs.'),
  ip_not_allowed: e(403, 'permission_error', "The request comes from an address outside this key's IP allowlist."),
  reseller_suspended: e(403, 'permission_error', 'This account is suspended.'),
  live_not_enabled: e(403, 'permission_error', 'Live mode is not enabled for this account yet.'),
  admin_unauthorized: e(401, 'authentication_error', 'The admin token is missing or wrong.'),
  // request shape
  invalid_json: e(400, 'invalid_request_error', 'The request body is not valid JSON.'),
  invalid_parameter: e(400, 'invalid_request_error', 'A parameter is invalid.'),
  unknown_parameter: e(400, 'invalid_request_error', 'The request contains a parameter this endpoint does not take.'),
  parameter_missing: e(400, 'invalid_request_error', 'A required parameter is missing.'),
  field_too_long: e(400, 'invalid_request_error', 'A field is longer than its documented maximum.'),
  invalid_string: e(400, 'invalid_request_error', 'Text may not contain NUL (U+0000) or an unpaired UTF-16 surrogate, and a URL must be valid UTF-8.'),
  payload_too_large: e(400, 'invalid_request_error', 'The request body is larger than 1 MB.'),
  unsupported_content_type: e(400, 'invalid_request_error', 'Send request bodies as application/json.'),
  invalid_cursor: e(400, 'invalid_request_error', 'starting_after does not name an object of this list.'),
  idempotency_key_too_long: e(400, 'invalid_request_error', 'Idempotency-Key must be 1 to 255 characters.'),
  idempotency_key_reused: e(409, 'conflict_error', 'This Idempotency-Key was used with a different request.'),
  rate_limit_exceeded: e(429, 'invalid_request_error', 'Too many requests; retry after the number of seconds in Retry-After.'),
  route_not_found: e(404, 'not_found_error', 'No such endpoint.'),
  // the connection and the router, before a route runs
  uri_too_long: e(414, 'invalid_request_error', 'The request URL is longer than 8,192 characters, or a segment of its path longer than 1,024.'),
  headers_too_large: e(431, 'invalid_request_error', 'The request line and headers are larger than 16 KB.'),
  request_timeout: e(408, 'invalid_request_error', 'The request was not received in time; the connection is closed.'),
  malformed_request: e(400, 'invalid_request_error', 'The request is not well-formed HTTP.'),
  // customers
  name_required: e(400, 'invalid_request_error', 'A customer needs a non-blank name.'),
  country_not_supported: e(400, 'invalid_request_error', 'That country is not an opened market.'),
  invalid_timezone: e(400, 'invalid_request_error', 'timezone must be an IANA time zone name such as Europe/London.'),
  invalid_url: e(400, 'invalid_request_error', 'website_url must be an http or https URL.'),
  customer_limit_reached: e(403, 'permission_error', "The account's customer ceiling is full."),
  customer_not_found: e(404, 'not_found_error', 'No customer with that id in this mode.'),
  external_ref_taken: e(409, 'conflict_error', 'Another customer of this account already has that external_ref.'),
  invalid_limit: e(400, 'invalid_request_error', 'A limit must be a non-negative whole number or null.'),
  forward_needs_phone: e(400, 'invalid_request_error', "call_settings.inbound.action forward sends calls back to the customer's own phone, and this customer has no phone: choose agent or message, or create the customer with phone."),
  invalid_brand_field: e(400, 'invalid_request_error', 'Colours must be hex (#RRGGBB) and URLs must be https.'),
  invalid_provisioning_step: e(400, 'invalid_request_error', 'steps may contain only number, script, agent and calendar.'),
  provisioning_not_recorded: e(500, 'api_error', 'The provisioning request was not recorded; nothing started. Retry safely.'),
  onboarding_link_not_created: e(500, 'api_error', 'The onboarding link was not created; nothing was sent. Retry safely.'),
  onboarding_email_limit: e(429, 'invalid_request_error', 'Too many onboarding links were emailed in the last 24 hours (5 per customer, 200 per account); mint without email and send the link yourself, or try later.'),
  calendar_connection_failed: e(422, 'invalid_request_error', 'The calendar could not be connected: the check (read free/busy, write and delete a probe event) failed; the message says why. Nothing was stored.'),
  calendar_not_connected: e(409, 'conflict_error', 'The customer has no calendar connected.'),
  calendar_link_not_created: e(500, 'api_error', 'The calendar link was not created; nothing was sent. Retry safely.'),
  // calls
  invalid_phone_number: e(400, 'invalid_request_error', 'phone is not a valid telephone number.'),
  phone_country_mismatch: e(400, 'invalid_request_error', "The number is not in the customer's country."),
  invalid_dial_before: e(400, 'invalid_request_error', 'dial_before must be an ISO 8601 time between now and 30 days ahead.'),
  consent_required: e(400, 'invalid_request_error', 'The consent sent does not meet what an AI-voice call to this number needs; the message names what is required.'),
  requested_call_only: e(400, 'invalid_request_error', 'An AI-voice sales call to this number is lawful only when the called party asked for it (consent type requested_call); the message names the state and its statute.'),
  no_redial_after_hang_up: e(400, 'invalid_request_error', 'The callee ended an earlier call from this customer, and the law of the number forbids calling it again; the message names the statute.'),
  registered_address_required: e(400, 'invalid_request_error', "A call to a UK number must give the business's address or a freephone number (PECR reg. 24); set the customer's registered_address first."),
  call_not_found: e(404, 'not_found_error', 'No call or call request with that id in this mode.'),
  compliance_record_not_found: e(404, 'not_found_error', 'That request was never dialled, so it has no compliance record.'),
  call_already_claimed: e(409, 'conflict_error', 'The dialler has already claimed this request; it can no longer be cancelled.'),
  call_already_finished: e(409, 'conflict_error', 'This request has already ended.'),
  appointment_not_found: e(404, 'not_found_error', 'No appointment with that id in this mode.'),
  dnc_entry_not_found: e(404, 'not_found_error', 'That number is not on your do-not-call list.'),
  dnc_entry_protected: e(409, 'conflict_error', 'The callee asked not to be called again; that entry cannot be removed.'),
  dnc_entry_other_mode: e(409, 'conflict_error', 'That number was added with a key of the other mode; only a key of the mode that added it can remove it.'),
  dnc_registry_unknown: e(400, 'invalid_request_error', 'No such national do-not-call registry for that country; name one of the known registries.'),
  dnc_registry_empty: e(400, 'invalid_request_error', 'The registry file holds no number of its country; a load replaces the list, so an empty file is refused.'),
  // numbers
  number_not_found: e(404, 'not_found_error', 'No number with that id for this customer in this mode.'),
  country_required: e(400, 'invalid_request_error', 'The customer has no country, and a number is rented in the customer\'s country.'),
  no_number_available: e(409, 'conflict_error', "The carrier has no number for sale in the customer's country right now; nothing was charged."),
  number_already_added: e(409, 'conflict_error', 'This number is already a caller ID of this customer (verifying or verified).'),
  caller_id_in_use: e(409, 'conflict_error', 'This number is already verified at the carrier for another use; nothing was started.'),
  carrier_unavailable: e(503, 'api_error', 'The carrier could not be reached or refused the change; nothing changed. Retry later.'),
  caller_id_not_geographic: e(400, 'invalid_request_error', 'A caller ID must be a landline or mobile number, not a premium-rate, toll-free, shared-cost or other non-geographic number; nothing was started.'),
  phone_extension_not_allowed: e(400, 'invalid_request_error', 'The number has an extension, which the carrier cannot call; send it without one.'),
  verification_in_progress: e(409, 'conflict_error', 'This number is being verified as a caller ID right now; try again when that verification has ended (within minutes).'),
  verification_limit_reached: e(429, 'invalid_request_error', 'Too many caller ID verifications are running for this customer or account; try again when one has ended.'),
  verification_daily_limit: e(429, 'invalid_request_error', 'This account has started the most caller ID verifications a day; try again tomorrow (UTC).'),
  // websites
  website_not_found: e(404, 'not_found_error', 'No website build with that id for this customer in this mode.'),
  website_not_ready: e(409, 'conflict_error', 'The website is not in a state that allows this; the message says why.'),
  revision_limit_reached: e(409, 'conflict_error', 'The revision included with this build has been used.'),
  invalid_domain: e(400, 'invalid_request_error', 'domain must be a DNS name of the customer, such as www.brightdental.com.'),
  domain_already_set: e(409, 'conflict_error', 'The website already has a domain; send replace: true to put another in its place.'),
  test_mode_domain: e(400, 'invalid_request_error', 'A test-mode website takes only a name reserved for testing (under .test or .example); real domains are for live websites.'),
  brand_domain_taken: e(409, 'conflict_error', "That domain is already held by another account's brand or a customer's website (verified by DNS)."),
  sites_not_configured: e(503, 'api_error', 'Websites cannot take a domain here: the service has no sites domain configured (SWITCHBOARD_SITES_DOMAIN).'),
  recording_not_available: e(404, 'not_found_error', 'This call has no recording.'),
  transcript_not_available: e(404, 'not_found_error', 'This call has no transcript yet.'),
  invalid_twilio_signature: e(403, 'permission_error', 'The X-Twilio-Signature header does not match.'),
  // events and webhooks
  event_not_found: e(404, 'not_found_error', 'No event with that id in this mode.'),
  webhook_endpoint_not_found: e(404, 'not_found_error', 'No webhook endpoint with that id on this account.'),
  webhook_delivery_not_found: e(404, 'not_found_error', 'No delivery with that id for this endpoint.'),
  // the reseller console (/console/api)
  console_session_required: e(401, 'authentication_error', 'Sign in to the console: the session is missing, has ended or was signed out.'),
  csrf_failed: e(403, 'permission_error', 'The request did not come from the console page (its X-CSRF-Token header or Origin is missing or wrong). Reload the page and try again.'),
  role_forbidden: e(403, 'permission_error', 'Your role in this account does not allow this.'),
  two_factor_setup_required: e(403, 'permission_error', 'This account requires two-factor authentication: set it up before anything else.'),
  invalid_credentials: e(401, 'authentication_error', 'The email address or the password is wrong.'),
  two_factor_code_required: e(401, 'authentication_error', 'This person uses two-factor authentication: send the 6-digit code from the authenticator app as `code`.'),
  invalid_two_factor_code: e(401, 'authentication_error', 'The two-factor code is wrong, expired or was already used; wait for the next code and try again.'),
  two_factor_already_enabled: e(409, 'conflict_error', 'Two-factor authentication is already on; turn it off first to set up another authenticator.'),
  two_factor_not_set_up: e(409, 'conflict_error', 'Set two-factor up first (POST /console/api/two_factor/setup), then enable it with a code.'),
  two_factor_not_enabled: e(409, 'conflict_error', 'Two-factor authentication is not on.'),
  password_reset_invalid: e(404, 'not_found_error', 'This password reset link is unknown, used or expired; ask for a new one.'),
  console_session_not_found: e(404, 'not_found_error', 'No session with that id.'),
  console_member_not_found: e(404, 'not_found_error', 'No member with that id in this account.'),
  console_invitation_not_found: e(404, 'not_found_error', 'No pending invitation with that id in this account.'),
  own_role_unchangeable: e(403, 'permission_error', 'Nobody changes their own role or removes themselves; ask another owner or admin.'),
  owner_protected: e(403, 'permission_error', 'Only an owner can make, invite, change, remove or reset the password of an owner.'),
  last_owner: e(409, 'conflict_error', 'The account must keep at least one owner: make someone else owner first.'),
  invitation_invalid: e(404, 'not_found_error', 'This invitation link is unknown, used, withdrawn or expired; ask for a new one.'),
  password_rejected: e(400, 'invalid_request_error', 'The password is not acceptable.'),
  email_taken: e(409, 'conflict_error', 'A person with this email address already has a console sign-in.'),
  webhook_delivery_in_progress: e(409, 'conflict_error', 'That delivery is being attempted right now; try again in a moment.'),
  invalid_webhook_url: e(400, 'invalid_request_error', 'The webhook URL is not allowed.'),
  invalid_event_type: e(400, 'invalid_request_error', 'An unknown event type was given.'),
  // sessions and chat
  end_user_ref_required: e(400, 'invalid_request_error', 'end_user_ref is required: the reseller\'s identifier of the person, up to 128 characters.'),
  ttl_out_of_range: e(400, 'invalid_request_error', 'ttl_seconds must be a whole number from 60 to 3600.'),
  session_selector_required: e(400, 'invalid_request_error', 'Give session_id or end_user_ref to say which sessions to end.'),
  session_not_found: e(404, 'not_found_error', 'No chat session with that id for this customer.'),
  session_not_created: e(500, 'api_error', 'The chat session was not created; nothing was charged. Retry safely.'),
  message_required: e(400, 'invalid_request_error', 'message is required and must not be empty.'),
  message_too_long: e(400, 'invalid_request_error', 'message is longer than 4,000 characters.'),
  invalid_session_token: e(401, 'authentication_error', 'The session token is missing, malformed or unknown. /v1/chat takes a session token, not an API key.'),
  session_expired: e(401, 'authentication_error', 'This chat session has expired; ask for a new one.'),
  session_revoked: e(401, 'authentication_error', 'This chat session has been ended; ask for a new one.'),
  insufficient_balance: e(402, 'invalid_request_error', 'The balance cannot cover this message; nothing was charged.'),
  session_exhausted: e(429, 'invalid_request_error', 'This chat session has used all of its 200 messages; ask for a new one.'),
  chat_unavailable: e(503, 'api_error', 'The assistant could not answer; nothing was charged and the message was not counted. Retry.'),
  // console
  account_not_found: e(404, 'not_found_error', 'No account with that id.'),
  key_not_found: e(404, 'not_found_error', 'No API key with that id on this account.'),
  invalid_scope: e(400, 'invalid_request_error', 'An unknown scope was given.'),
  invalid_ip_allowlist: e(400, 'invalid_request_error', 'ip_allowlist entries must be IPv4/IPv6 addresses or CIDR ranges.'),
  invalid_expires_at: e(400, 'invalid_request_error', 'expires_at must be a future ISO 8601 timestamp.'),
  kyb_incomplete: e(409, 'conflict_error', 'Business verification is not complete; live keys and go-live need it.'),
  go_live_blocked: e(409, 'conflict_error', 'The account cannot go live yet.'),
  agreement_version_not_current: e(400, 'invalid_request_error', 'Only the agreement version in force can be signed; reload it and sign that version.'),
  key_already_revoked: e(409, 'conflict_error', 'This API key is already revoked.'),
  top_up_too_small: e(400, 'invalid_request_error', 'A top-up is at least 2,500 cents.'),
  payments_not_configured: e(409, 'conflict_error', 'Card payments are not configured for this mode; the platform operator adds funds.'),
  processor_unavailable: e(503, 'api_error', 'The card processor could not be reached; nothing was charged. Retry.'),
  saved_card_required: e(409, 'conflict_error', 'Automatic top-up needs a saved card: top up once by card with "save card" ticked.'),
  card_payment_not_found: e(404, 'not_found_error', 'No card payment with that id on this account.'),
  invalid_webhook_signature: e(400, 'invalid_request_error', 'The Stripe-Signature header does not match the body, or its timestamp is outside the tolerance.'),
  refund_too_large: e(409, 'conflict_error', 'A refund cannot exceed what is left of the payment, nor the live cash balance less what running calls hold.'),
  card_declined: e(402, 'invalid_request_error', 'The card was declined; the message says why, as the card processor words it.'),
  checkout_session_not_found: e(404, 'not_found_error', 'No test-mode checkout with that id on this account.'),
  checkout_session_expired: e(409, 'conflict_error', 'This checkout has expired (24 hours after it was opened); start the top-up again.'),
  hold_not_found: e(404, 'not_found_error', 'No hold with that reference on this account.'),
  unknown_job: e(404, 'not_found_error', 'No such job; see the README for the job names.'),
  invalid_locale: e(400, 'invalid_request_error', 'locale must be a language-REGION tag such as en-GB.'),
  test_clock_disabled: e(404, 'not_found_error', 'The test clock is only available when SWITCHBOARD_TEST_CLOCK=1.'),
  test_clock_not_found: e(404, 'not_found_error', 'No test clock with that id on this account.'),
  test_clock_not_forward: e(400, 'invalid_request_error', "A test clock only moves forward: the new time must be after the clock's frozen_time."),
  test_clock_advance_too_far: e(400, 'invalid_request_error', 'A test clock moves at most two years at a time.'),
  test_clock_live_customer: e(400, 'invalid_request_error', 'Only test-mode customers can be put on a test clock.'),
  // availability
  service_unavailable: e(503, 'api_error', 'The service cannot reach its database right now; retry after the number of seconds in Retry-After. A write retried with the same Idempotency-Key is applied once.'),
  // anything else
  api_error: e(500, 'api_error', 'Something went wrong on our side. Retry; nothing was changed if the request did not succeed.'),
} as const satisfies Record<RefusalCode, CatalogueEntry> & Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERRORS;

/** An error with a catalogue code. `message` overrides the catalogue text with a more specific one. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  /** Extra response headers (Retry-After). */
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    const entry = ERRORS[code];
    super(message ?? entry.message);
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.headers = headers;
  }
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;

/**
 * The API error an error answers with: a catalogue error as it is, a domain refusal through the
 * catalogue (its own text when it has one), anything else null (the boundary's 500 or 503).
 */
export function apiErrorOf(err: unknown): ApiError | null {
  if (isApiError(err)) return err;
  if (isRefusal(err)) return new ApiError(err.code, err.explanation);
  return null;
}
