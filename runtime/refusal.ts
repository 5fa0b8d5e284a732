/**
 * How the domain says no, and how it says that an entity is gone. Neither names HTTP: the
 * error catalogue (`http/errors.ts`) maps every refusal code to a status, a type and a message,
 * and the actor system (`actor-system.ts`) decides what each does to the actor that threw it
 * (docs/decisions.md, "Refusals, crashes and supervision").
 */

/**
 * Every reason the domain refuses a request with: the one list, which the error catalogue must
 * cover (a type-level check there). A new refusal adds its code here, then its catalogue entry
 * and its line in docs/api.md.
 */
export type RefusalCode =
  // requests of any kind
  | 'invalid_parameter'
  | 'parameter_missing'
  | 'invalid_cursor'
  | 'idempotency_key_reused'
  // accounts and keys
  | 'account_not_found'
  | 'invalid_api_key'
  | 'key_not_found'
  | 'key_already_revoked'
  | 'invalid_scope'
  | 'invalid_ip_allowlist'
  | 'invalid_expires_at'
  | 'kyb_incomplete'
  | 'go_live_blocked'
  | 'invalid_brand_field'
  // test clocks (the console)
  | 'test_clock_not_found'
  | 'test_clock_not_forward'
  | 'test_clock_advance_too_far'
  | 'test_clock_live_customer'
  // customers
  | 'customer_not_found'
  | 'country_not_supported'
  | 'invalid_timezone'
  | 'invalid_url'
  | 'customer_limit_reached'
  | 'forward_needs_phone'
  | 'external_ref_taken'
  | 'provisioning_not_recorded'
  | 'onboarding_link_not_created'
  | 'onboarding_email_limit'
  | 'calendar_connection_failed'
  | 'calendar_not_connected'
  | 'calendar_link_not_created'
  // calls, appointments and the do-not-call list
  | 'invalid_phone_number'
  | 'phone_country_mismatch'
  | 'invalid_dial_before'
  | 'consent_required'
  | 'requested_call_only'
  | 'no_redial_after_hang_up'
  | 'registered_address_required'
  | 'call_not_found'
  | 'call_already_claimed'
  | 'call_already_finished'
  | 'appointment_not_found'
  | 'dnc_entry_not_found'
  | 'dnc_entry_protected'
  | 'dnc_entry_other_mode'
  | 'dnc_registry_unknown'
  | 'dnc_registry_empty'
  | 'compliance_record_not_found'
  // numbers
  | 'number_not_found'
  | 'country_required'
  | 'no_number_available'
  | 'number_already_added'
  | 'caller_id_in_use'
  | 'carrier_unavailable'
  | 'caller_id_not_geographic'
  | 'phone_extension_not_allowed'
  | 'verification_in_progress'
  | 'verification_limit_reached'
  | 'verification_daily_limit'
  // websites
  | 'website_not_found'
  | 'website_not_ready'
  | 'revision_limit_reached'
  | 'invalid_domain'
  | 'domain_already_set'
  | 'brand_domain_taken'
  | 'test_mode_domain'
  | 'sites_not_configured'
  // money
  | 'hold_not_found'
  | 'insufficient_balance'
  // card payments
  | 'payments_not_configured'
  | 'processor_unavailable'
  | 'saved_card_required'
  | 'card_payment_not_found'
  | 'refund_too_large'
  // the simulated card processor of test mode
  | 'card_declined'
  | 'checkout_session_not_found'
  | 'checkout_session_expired'
  // chat sessions
  | 'session_not_found'
  | 'session_selector_required'
  | 'session_not_created'
  | 'invalid_session_token'
  | 'session_expired'
  | 'session_revoked'
  | 'session_exhausted'
  | 'chat_unavailable'
  // events and webhooks
  | 'event_not_found'
  | 'webhook_endpoint_not_found'
  | 'webhook_delivery_not_found'
  | 'webhook_delivery_in_progress'
  | 'invalid_webhook_url'
  | 'invalid_event_type'
  // console sign-in, two-factor, password resets, sessions, team
  | 'invalid_credentials'
  | 'two_factor_code_required'
  | 'invalid_two_factor_code'
  | 'two_factor_already_enabled'
  | 'two_factor_not_set_up'
  | 'two_factor_not_enabled'
  | 'password_reset_invalid'
  | 'console_session_not_found'
  | 'console_member_not_found'
  | 'console_invitation_not_found'
  | 'own_role_unchangeable'
  | 'owner_protected'
  | 'last_owner'
  // the console's people
  | 'invitation_invalid'
  | 'password_rejected'
  | 'email_taken';

/**
 * A refusal: the answer to a request that breaks a rule or names nothing. Not a failure: the
 * actor that throws it keeps its state and goes on with its next message.
 */
export class Refusal extends Error {
  override readonly name = 'Refusal';
  readonly code: RefusalCode;
  /** A text more specific than the catalogue's for this code (it reaches the caller); undefined keeps the catalogue's. */
  readonly explanation: string | undefined;
  /** Plain facts behind the refusal, for the log line (never sent: the error body has a fixed shape). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: RefusalCode, explanation?: string, details?: Record<string, unknown>) {
    super(explanation ?? code);
    this.code = code;
    this.explanation = explanation;
    this.details = details;
  }
}

export const isRefusal = (err: unknown): err is Refusal => err instanceof Refusal;

/**
 * The entity an actor stands for has no row (any more): nothing to reload, so its actor stops
 * instead of being reset. Thrown where the row's absence breaks an invariant (a call actor is
 * only ever spawned for a call that was inserted), never as an answer to a caller's mistake,
 * which is a `Refusal` (`customer_not_found`).
 */
export class EntityGone extends Error {
  override readonly name = 'EntityGone';
  constructor(
    readonly kind: string,
    readonly id: string,
  ) {
    super(`no ${kind} ${id}`);
  }
}
