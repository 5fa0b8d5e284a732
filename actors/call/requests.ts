import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { createCallRepository, type CallRow, type StoredConsent } from '../../db/calls.ts';
import type { LineType } from '../../runtime/types.ts';
import { recordEvent } from '../../db/events.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { parsePhone } from '../shared/phone.ts';
import { parseRfc3339 } from '../shared/rfc3339.ts';
import type { CustomerDirectory } from '../customer/customer-directory.ts';
import { callRequestView, callView, isFinished } from './views.ts';
import { withTransaction } from '../../db/pool.ts';
import { liveCarrierKind } from '../../runtime/config.ts';
import { produceComplianceRecord } from './compliance-record.ts';
import { createTestClockRepository } from '../../db/test-clocks.ts';
import { createProspectResearchRepository } from '../../db/prospect-research.ts';
import { createCustomerRepository } from '../../db/customers.ts';

/**
 * The reseller-facing side of calls: queueing requests, reading them and cancelling them. A plain
 * module, not an actor: each write is one transaction whose outcome PostgreSQL decides (a unique
 * index, a conditional update), so it needs no mailbox, in one process or across several
 * (docs/decisions.md, "Per-entity write queues and plain modules").
 */

/** A request not dialled within this long expires (unless the request names an earlier `dial_before`). */
export const DEFAULT_DIAL_WINDOW_DAYS = 7;
export const MAX_DIAL_WINDOW_DAYS = 30;

/**
 * The range a consent's dates are read in (docs/api.md, "Calls"): `obtained_at` no earlier than
 * CONSENT_EARLIEST and no later than the service's clock plus CONSENT_CLOCK_SKEW_MS (the
 * reseller's clock may run a little ahead); `expires_at` after `obtained_at` and no later than
 * CONSENT_LATEST.
 */
export const CONSENT_EARLIEST = new Date('2000-01-01T00:00:00Z');
export const CONSENT_LATEST = new Date('2100-01-01T00:00:00Z');
export const CONSENT_CLOCK_SKEW_MS = 5 * 60_000;

/** The consent the reseller says it holds for the called party, as sent. */
export interface ConsentInput {
  type: StoredConsent['type'];
  obtained_at?: string;
  source?: string;
  evidence_ref?: string;
  expires_at?: string | null;
}

/** A request to call, as the reseller sends it. */
export interface QueueCallInput {
  /** The customer's service id or external_ref. */
  customer_id: string;
  phone: string;
  business_name?: string | null;
  /** The called business's website, researched once before the first dial (prospect-research.ts). */
  website_url?: string | null;
  external_ref?: string | null;
  dial_before?: string | null;
  /** Absent: `none`. */
  consent?: ConsentInput;
  /** Who the reseller says answers: `business` lets a business landline go without consent (47 U.S.C. 227(b)(1)(B)). */
  called_party?: 'business' | 'consumer' | null;
}

/**
 * Whether the consent sent meets what an AI-voice call to the number needs, and the number's line
 * type. The rule belongs to the scheduler (actors/scheduler/consent-gate.ts); app/ hands it in.
 */
export type ConsentGate = (request: {
  mode: Mode;
  e164: string;
  country: string;
  consent: StoredConsent;
  /** What the request says of the called party; null when it says nothing (then never a business). */
  calledParty: 'business' | 'consumer' | null;
  /** The outcomes of the customer's earlier dialled calls to the number (no redial after a hang-up). */
  earlierOutcomes: readonly (string | null)[];
  now: Date;
}) => Promise<
  { ok: true; lineType: LineType } | { ok: false; lineType: LineType; code: 'consent_required' | 'requested_call_only' | 'no_redial_after_hang_up'; explanation: string }
>;

/** A consent date as sent: a real RFC 3339 date-time with an offset, inside the documented range, else 400 naming the field. */
function consentDate(field: 'obtained_at' | 'expires_at', text: string, earliest: Date, latest: Date, rule: string): Date {
  const at = parseRfc3339(text);
  if (!at) {
    throw new Refusal(
      'invalid_parameter',
      `consent.${field} must be an RFC 3339 date-time with a real calendar date and an offset, such as 2026-11-20T14:02:00Z or 2026-11-20T09:02:00-05:00; "${text.slice(0, 40)}" is not.`,
    );
  }
  if (at < earliest || at > latest) throw new Refusal('invalid_parameter', `consent.${field} must be ${rule}; ${at.toISOString()} is not.`);
  return at;
}

/** Reads the consent of a request; `invalid_parameter` / `parameter_missing` name the field. */
function storedConsent(input: ConsentInput | undefined, now: Date): StoredConsent {
  if (!input || input.type === 'none') {
    return { type: 'none', obtainedAt: null, source: null, evidenceRef: null, expiresAt: null };
  }
  for (const field of ['obtained_at', 'source', 'evidence_ref'] as const) {
    if (!input[field]?.trim()) throw new Refusal('parameter_missing', `consent.${field} is required when consent.type is ${input.type}.`);
  }
  const obtainedAt = consentDate(
    'obtained_at',
    input.obtained_at!,
    CONSENT_EARLIEST,
    new Date(now.getTime() + CONSENT_CLOCK_SKEW_MS),
    `no earlier than ${CONSENT_EARLIEST.toISOString()} and not in the future (5 minutes of clock difference allowed)`,
  );
  let expiresAt: Date | null = null;
  if (input.expires_at) {
    expiresAt = consentDate('expires_at', input.expires_at, new Date(obtainedAt.getTime() + 1), CONSENT_LATEST, `after consent.obtained_at and no later than ${CONSENT_LATEST.toISOString()}`);
  }
  return { type: input.type, obtainedAt, source: input.source!, evidenceRef: input.evidence_ref!, expiresAt };
}

/** A request's `website_url`: an http(s) URL without credentials, else `invalid_parameter`; null when none was sent. */
function researchedWebsite(text: string | null | undefined): string | null {
  if (!text?.trim()) return null;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Refusal('invalid_parameter', 'website_url must be an http or https URL such as https://acme.example.');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new Refusal('invalid_parameter', 'website_url must be an http or https URL without a user name or password.');
  }
  return url.href;
}

export function createCallRequests(deps: Deps, customers: CustomerDirectory, consentGate: ConsentGate) {
  const { pool, clock, config } = deps;

  async function queueCall(accountId: string, mode: Mode, input: QueueCallInput, idempotency: IdempotencyClaim | undefined): Promise<Written<ReturnType<typeof callRequestView>>> {
    const now = clock.now();
    const customer = await customers.find(accountId, mode, input.customer_id);
    // Live calls need a carrier: without one nothing is queued (readiness says carrier_not_configured).
    if (mode === 'live' && !liveCarrierKind(config)) throw new Refusal('carrier_unavailable', 'No carrier is set up for live calls yet; nothing was queued or charged.');
    const parsed = parsePhone(input.phone, customer.country);
    if (!parsed.ok) {
      throw new Refusal('invalid_phone_number', `"${input.phone}" is not a valid telephone number (read with ${customer.country} as the default country).`);
    }
    if (parsed.country !== customer.country) {
      throw new Refusal('phone_country_mismatch', `${parsed.e164} is a ${parsed.country} number; this customer calls in ${customer.country}.`);
    }
    // A test customer on a test clock has its request's schedule on the clock's time (migration 028).
    const onClock = mode === 'test' ? await createTestClockRepository(pool).clockOfCustomer(customer.id) : null;
    const dueAt = onClock?.frozenTime ?? now;
    let dialBefore = new Date(dueAt.getTime() + DEFAULT_DIAL_WINDOW_DAYS * 86_400_000);
    if (input.dial_before) {
      const d = new Date(input.dial_before);
      if (Number.isNaN(d.getTime()) || d <= dueAt || d.getTime() - dueAt.getTime() > MAX_DIAL_WINDOW_DAYS * 86_400_000) {
        throw new Refusal('invalid_dial_before');
      }
      dialBefore = d;
    }
    const consent = storedConsent(input.consent, now);
    const websiteUrl = researchedWebsite(input.website_url);
    // The gate runs before anything is written: a refused request leaves nothing queued.
    const earlierOutcomes = await createCallRepository(pool).earlierOutcomes(customer.id, parsed.e164);
    const gate = await consentGate({ mode, e164: parsed.e164, country: parsed.country, consent, calledParty: input.called_party ?? null, earlierOutcomes, now });
    if (!gate.ok) throw new Refusal(gate.code, gate.explanation);
    // PECR reg. 24(1)(b): a UK call's opening gives the business's address or a freephone number.
    // The caller ID is chosen at the dial, from numbers that come and go, so only the address is
    // known to hold here: without it nothing is queued (docs/api.md, "Calls").
    if (parsed.country === 'GB' && !(await createCustomerRepository(pool).get(customer.id))?.registered_address) {
      throw new Refusal('registered_address_required', `${parsed.e164} is a UK number: a call to it must give the business's address or a freephone number (PECR reg. 24). Set the customer's registered_address (PATCH /v1/customers/${customer.id}); nothing was queued.`);
    }
    // Two requests for one open number, or with one external_ref, of a customer race on the unique
    // indexes calls_one_open_per_number and calls_one_open_per_ref: the second waits for the first
    // to commit, then finds its request (created: false).
    return writeTransaction(pool, idempotency, now, async (client) => {
      const { row, created } = await createCallRepository(client).insertOrFindOpen({
        accountId,
        mode,
        customerId: customer.id,
        toE164: parsed.e164,
        toCountry: parsed.country,
        phoneInput: input.phone,
        businessName: input.business_name ?? null,
        externalRef: input.external_ref ?? null,
        dialBefore,
        consent,
        lineType: gate.lineType,
        now,
        dueAt,
      });
      if (created && websiteUrl) {
        await createProspectResearchRepository(client).insert({ requestId: row.id, accountId, mode, customerId: customer.id, websiteUrl, now });
      }
      // The open row may be a later attempt of a request (a retry): the answer is the request.
      return { created, body: callRequestView(await createCallRepository(client).attemptsOf(row.request_id)) };
    });
  }

  /** The call of the account and mode; `call_not_found` for another account's or mode's. */
  async function getCall(accountId: string, mode: Mode, id: string) {
    const row = await createCallRepository(pool).findForAccount(accountId, mode, id);
    if (!row) throw new Refusal('call_not_found');
    return row;
  }

  /** The request `id` names (its own id or any of its attempts'), with every attempt. */
  async function getRequestView(accountId: string, mode: Mode, id: string) {
    return callRequestView(await createCallRepository(pool).attemptsOf((await getCall(accountId, mode, id)).request_id));
  }

  return {
    queueCall,
    getCall,

    async getCallView(accountId: string, mode: Mode, id: string) {
      return callView(await getCall(accountId, mode, id), config.publicUrl);
    },

    /** The compliance record of the account's call (UWG § 7a: the reseller produces it on request). */
    async getComplianceRecord(accountId: string, mode: Mode, id: string) {
      return produceComplianceRecord(pool, (await getCall(accountId, mode, id)).id);
    },

    getRequestView,

    /** `view: 'calls'`: every dialled call, each attempt on its own; `'requests'`: each request once, with its attempts. */
    async listCalls(accountId: string, mode: Mode, f: { customerId: string | null; view: 'calls' | 'requests'; status: string | null; page: Page }) {
      const calls = createCallRepository(pool);
      const before = await pageStart(pool, f.page, { table: 'calls', accountId, mode });
      const filter = { accountId, mode, customerId: f.customerId, status: f.status, limit: f.page.limit + 1, beforeSeq: before };
      if (f.view === 'calls') return toList(await calls.list({ ...filter, dialledOnly: true }), f.page.limit, (r) => callView(r, config.publicUrl));
      const requests = await calls.listRequests(filter);
      const attempts = new Map<string, CallRow[]>();
      for (const a of await calls.attemptsOfMany(requests.map((r) => r.id))) attempts.set(a.request_id, [...(attempts.get(a.request_id) ?? []), a]);
      return toList(requests, f.page.limit, (r) => callRequestView(attempts.get(r.id) ?? [r]));
    },

    /**
     * Cancels a request by its id or any attempt's: its pending attempt (queued, a retry's
     * included) is cancelled, and no attempt follows. Once the dialler has claimed the attempt the
     * answer is 409, never a silent success. Cancelling a cancelled request answers it again, also
     * when a concurrent cancel won the row between our read and our update (then that one
     * recorded the call.completed event).
     */
    async cancelCall(accountId: string, mode: Mode, id: string) {
      const now = clock.now();
      const requestId = (await getCall(accountId, mode, id)).request_id;
      const latest = async () => (await createCallRepository(pool).attemptsOf(requestId)).at(-1)!;
      const existing = await latest();
      if (existing.status === 'cancelled') return getRequestView(accountId, mode, requestId);
      const cancelled = await withTransaction(pool, async (client) => {
        const row = await createCallRepository(client).cancelIfQueued(existing.id, now);
        if (row) await recordEvent(client, { accountId, mode, type: 'call.completed', data: callView(row, config.publicUrl), now });
        return row;
      });
      const current = cancelled ?? (await latest());
      if (current.status === 'cancelled') return getRequestView(accountId, mode, requestId);
      if (isFinished(current.status)) throw new Refusal('call_already_finished', `This request already ended (${current.status}).`);
      throw new Refusal('call_already_claimed');
    },
  };
}

export type CallRequests = ReturnType<typeof createCallRequests>;
