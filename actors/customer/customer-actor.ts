import type { Behaviour } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import { createCallRepository } from '../../db/calls.ts';
import { CAP_WAITS } from '../../money/rules/hold-rules.ts';
import type { Mode } from '../../runtime/types.ts';
import { withTransaction, type Client, type Queryable } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { createOnboardingLinkRepository } from '../../db/onboarding-links.ts';
import { createProvisioningRepository } from '../../db/provisioning.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { countEmailsSince, enqueueEmail, lockAccountEmailCounts } from '../../db/email-outbox.ts';
import { ITEM_PRICES, settledSpend } from '../../money/rules/pricing.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { isRefusal, Refusal, type RefusalCode } from '../../runtime/refusal.ts';
import { hashToken, mintToken } from '../../runtime/tokens.ts';
import { pageStart, toList } from '../shared/list.ts';
import { customerOriginOf } from '../shared/brand-origin.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { checkReadiness, refreshReadiness } from './readiness-check.ts';
import { assessProvisioning, DEFAULT_STEPS } from './provisioning.ts';
import { dayOf, nextRenewal } from '../../money/rules/renewal.ts';
import { calendarLinkView, customerView, limitsView, onboardingLinkView, readinessView } from './views.ts';
import type { CustomerMessage, CustomerPatch, ProvisioningReply } from './messages.ts';
import { mergeBookingSettings } from './booking-settings.ts';
import { calendarConnectionOf, connectCalendar, disconnectCalendar, type CalendarRooms } from './calendar-connection.ts';
import { createCalendarLinkRepository } from '../../db/calendar-links.ts';
import { callSettingsProblem, mergeCallSettings, registeredAddressInput, registeredNameInput, trimmedCallSettingsPatch } from './call-settings-change.ts';

/** Onboarding links last 30 days (spec: Limits → Other). */
export const ONBOARDING_LINK_DAYS = 30;
export const ONBOARDING_TOKEN_PREFIX = 'ob_';
/** Onboarding links emailed in any 24 hours: per customer, and per account (docs/api.md, Onboarding links). */
export const ONBOARDING_EMAILS_PER_CUSTOMER_PER_DAY = 5;
export const ONBOARDING_EMAILS_PER_ACCOUNT_PER_DAY = 200;
/** Calendar links last 7 days (issue 24); minting one revokes the previous. */
export const CALENDAR_LINK_DAYS = 7;
export const CALENDAR_TOKEN_PREFIX = 'cal_';

/**
 * The customer actor: the single writer of one customer inside a process. It keeps only the
 * customer's immutable facts; readiness and everything else is read fresh from PostgreSQL.
 */
export interface CustomerState {
  id: string;
  accountId: string;
  mode: Mode;
  country: string;
}

const READS = new Set<CustomerMessage['type']>(['get_customer', 'get_readiness', 'get_provisioning', 'list_onboarding_links', 'get_limits', 'get_calendar']);

/**
 * The number step's work, done by the numbers room (actors/numbers/numbers.ts `provisionNumber`):
 * a customer without a working number in its country gets one rented, or the reason it could not
 * is recorded as the step's blocker. Handed in by app/, so the rooms do not import each other.
 */
export type ProvisionNumber = (customerId: string) => Promise<unknown>;

/** Seals a secret with the secret box (runtime/secret-box.ts): an emailed link kept in the outbox until sent. */
export type SealSecret = (plain: string) => Buffer;

export function customerBehaviour(deps: Deps, rooms: { provisionNumber: ProvisionNumber; seal: SealSecret } & CalendarRooms): Behaviour<CustomerMessage, CustomerState> {
  const { pool, clock, log, config } = deps;
  const calendarDeps = { pool, clock, log, calendars: rooms.calendars, secrets: rooms.secrets, allowPrivateAddresses: config.allowPrivateWebhooks };

  async function mustGet(db: Queryable, id: string, lock = false): Promise<CustomerRow> {
    const repo = createCustomerRepository(db);
    const row = lock ? await repo.lock(id) : await repo.get(id);
    if (!row) throw new Refusal('customer_not_found');
    return row;
  }

  async function readiness(db: Queryable, id: string) {
    const result = await checkReadiness(db, id, clock.now());
    if (!result) throw new Refusal('customer_not_found');
    return result;
  }

  async function provisioning(db: Queryable, state: CustomerState): Promise<ProvisioningReply> {
    const { facts, assessment } = await readiness(db, state.id);
    const view = assessProvisioning({
      readiness: assessment,
      calendar: { status: facts.calendar_status ?? 'not_connected', failureMessage: facts.calendar_failure_message },
      requestedSteps: facts.requested_steps ?? [],
      numberOrder: facts.number_order_outcome,
    });
    return { object: 'provisioning', customer_id: state.id, ...view, mode: state.mode };
  }

  /**
   * A change whose failure the spec names with its own "nothing happened, retry" code: an
   * unexpected error is logged and answered with that code instead of a bare api_error.
   */
  async function orFail<T>(code: RefusalCode, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      // An unreachable database is not this write's fault: the boundary answers 503 with Retry-After.
      if (isRefusal(err) || isDatabaseUnreachable(err)) throw err;
      log.error({ err, code }, 'write failed and was rolled back');
      throw new Refusal(code);
    }
  }

  async function requestProvisioning(state: CustomerState, steps: string[] | undefined, idem?: IdempotencyClaim): Promise<Written<ProvisioningReply>> {
    const requested = [...new Set(steps && steps.length ? steps : DEFAULT_STEPS)];
    // The number step is the service's move, made now: rented (test customers: from the fictional
    // ranges), or its blocker recorded. Before the request is recorded, so the answer shows it.
    if (requested.includes('number')) await rooms.provisionNumber(state.id);
    const now = clock.now();
    return orFail('provisioning_not_recorded', () =>
      writeTransaction(pool, idem, now, async (client) => {
        await mustGet(client, state.id, true);
        const repo = createProvisioningRepository(client);
        await repo.recordRequest({ accountId: state.accountId, customerId: state.id, steps: requested, now });
        await refreshReadiness(client, { customerId: state.id }, now);
        return { created: true, body: { ...(await provisioning(client, state)), requested_steps: requested } };
      }),
    );
  }

  /**
   * Emails a reseller asks the service to send to addresses it chooses are limited (docs/api.md,
   * Onboarding links), so no account can spend the platform's sending reputation: refused before
   * anything is written.
   */
  async function withinOnboardingEmailLimits(client: Client, state: CustomerState, now: Date): Promise<void> {
    // Counted under the account's lock: two mints for different customers cannot both pass at the limit.
    await lockAccountEmailCounts(client, state.accountId);
    const since = new Date(now.getTime() - 86_400_000);
    // Onboarding and calendar links emailed to customers share the limits (issue 24).
    const count = async (customerId?: string) =>
      (await countEmailsSince(client, { accountId: state.accountId, customerId, kind: 'onboarding_link', since })) +
      (await countEmailsSince(client, { accountId: state.accountId, customerId, kind: 'calendar_link', since }));
    if ((await count(state.id)) >= ONBOARDING_EMAILS_PER_CUSTOMER_PER_DAY) throw new Refusal('onboarding_email_limit');
    if ((await count()) >= ONBOARDING_EMAILS_PER_ACCOUNT_PER_DAY) throw new Refusal('onboarding_email_limit');
  }

  /**
   * A new link a customer opens (the ones before it replaced): onboarding (the calling terms) or
   * calendar (issue 24). With `email`, the link is also emailed there on the reseller's behalf:
   * the outbox row (the URL sealed) is written in the link's transaction, and the link keeps the
   * address (`emailed_to`). The stored body (idempotent replay) leaves the URL out: only the
   * token's hash is kept.
   */
  async function mintCustomerLink<L extends { id: string; expires_at: Date }, B extends object>(
    state: CustomerState,
    email: string | undefined,
    idem: IdempotencyClaim | undefined,
    spec: {
      failure: RefusalCode;
      kind: 'onboarding_link' | 'calendar_link';
      prefix: string;
      days: number;
      path: string;
      links: (client: Client) => {
        replaceActive(customerId: string, now: Date): Promise<number>;
        insert(l: { accountId: string; customerId: string; mode: Mode; tokenHash: Buffer; prefix: string; expiresAt: Date; emailedTo: string | null; now: Date }): Promise<L>;
      };
      view: (link: L, now: Date) => B;
    },
  ) {
    const now = clock.now();
    let url: string | undefined;
    const outcome = await orFail(spec.failure, () =>
      writeTransaction(pool, idem, now, async (client) => {
        const customer = await mustGet(client, state.id, true);
        if (email !== undefined) await withinOnboardingEmailLimits(client, state, now);
        const links = spec.links(client);
        await links.replaceActive(state.id, now);
        const token = mintToken(spec.prefix);
        const emailedTo = email === undefined ? null : email.trim().toLowerCase();
        const link = await links.insert({
          accountId: state.accountId,
          customerId: state.id,
          mode: state.mode,
          tokenHash: hashToken(token),
          prefix: token.slice(0, spec.prefix.length + 6),
          expiresAt: new Date(now.getTime() + spec.days * 86_400_000),
          emailedTo,
          now,
        });
        // At the reseller's brand domain once DNS has verified it, else at the service's public URL.
        url = `${await customerOriginOf(client, state.accountId, config.publicUrl)}/${spec.path}/${token}`;
        if (emailedTo !== null) {
          const country = await createCoverageRepository(client).get(customer.country);
          await enqueueEmail(client, {
            accountId: state.accountId,
            mode: state.mode,
            customerId: state.id,
            kind: spec.kind,
            audience: 'customer',
            to: emailedTo,
            dedupeKey: `${spec.kind}:${link.id}`,
            data: { customer_name: customer.name, link_id: link.id, expires_at: link.expires_at.toISOString(), language: country?.calling_language ?? null },
            secretSealed: rooms.seal(url),
            now,
          });
        }
        return { created: true, body: spec.view(link, now) };
      }),
    );
    return url === undefined ? outcome : { ...outcome, body: { ...outcome.body, url } };
  }

  const mintOnboardingLink = (state: CustomerState, email: string | undefined, idem?: IdempotencyClaim) =>
    mintCustomerLink(state, email, idem, {
      failure: 'onboarding_link_not_created',
      kind: 'onboarding_link',
      prefix: ONBOARDING_TOKEN_PREFIX,
      days: ONBOARDING_LINK_DAYS,
      path: 'onboarding',
      links: createOnboardingLinkRepository,
      view: (link, now) => onboardingLinkView(link, now, { expiresInDays: ONBOARDING_LINK_DAYS }),
    });

  /** A calendar link: 7 days, the page where the customer connects its calendar. */
  const mintCalendarLink = (state: CustomerState, email: string | undefined, idem?: IdempotencyClaim) =>
    mintCustomerLink(state, email, idem, {
      failure: 'calendar_link_not_created',
      kind: 'calendar_link',
      prefix: CALENDAR_TOKEN_PREFIX,
      days: CALENDAR_LINK_DAYS,
      path: 'calendar',
      links: createCalendarLinkRepository,
      view: (link) => calendarLinkView(link),
    });

  async function receive(state: CustomerState, msg: CustomerMessage): Promise<{ state: CustomerState; reply: unknown }> {
    const done = (reply: unknown) => ({ state, reply });
    const now = clock.now();
    switch (msg.type) {
      case 'get_customer':
        return done(customerView(await mustGet(pool, state.id)));
      case 'get_readiness': {
        const { facts, assessment } = await readiness(pool, state.id);
        return done(readinessView(facts, assessment));
      }
      case 'get_provisioning':
        return done(await provisioning(pool, state));
      case 'request_provisioning':
        return done(await requestProvisioning(state, msg.steps, msg.idempotency));
      case 'mint_onboarding_link':
        return done(await mintOnboardingLink(state, msg.email, msg.idempotency));
      case 'list_onboarding_links': {
        const before = await pageStart(pool, msg.page, { table: 'onboarding_links', customerId: state.id });
        const rows = await createOnboardingLinkRepository(pool).listForCustomer(state.id, msg.page.limit + 1, before);
        return done(toList(rows, msg.page.limit, (l) => onboardingLinkView(l, now)));
      }
      case 'complete_onboarding': {
        const link = await withTransaction(pool, async (client) => {
          await mustGet(client, state.id, true);
          const completed = await createOnboardingLinkRepository(client).complete(msg.linkId, msg.acceptedBy, now);
          if (!completed) return null;
          await createCustomerRepository(client).update(state.id, { terms_accepted_at: now, terms_accepted_by: msg.acceptedBy });
          await refreshReadiness(client, { customerId: state.id }, now);
          return completed;
        });
        if (!link) throw new Refusal('invalid_parameter', 'This link is no longer active.');
        return done(onboardingLinkView(link, now));
      }
      case 'get_limits': {
        const customer = await mustGet(pool, state.id);
        // The counters the caps are checked against, plus the holds of running calls.
        const settled = settledSpend(
          { day: customer.spend_day, dayCents: customer.spend_day_cents, month: customer.spend_month, monthCents: customer.spend_month_cents },
          now,
        );
        return done(limitsView(customer, { today_cents: settled.todayCents + customer.reserved_cents, month_cents: settled.monthCents + customer.reserved_cents }));
      }
      case 'update_customer':
        return done(await updateCustomer(state, msg.patch, msg.idempotency));
      case 'update_limits':
        return done(
          await writeTransaction(pool, msg.idempotency, now, async (client) => {
            await mustGet(client, state.id, true);
            const row = await createCustomerRepository(client).update(state.id, msg.patch);
            // A cap changed: the customer's requests held back by one try again at once.
            await createCallRepository(client).wakeWaiting({ accountId: row.account_id, customerId: state.id, reasons: CAP_WAITS, now });
            return { created: false, body: limitsView(row) };
          }),
        );
      case 'certify_script':
        // The certification date stands from the first time; the script text is the latest certified.
        return done(await changeAndAssess(state, { script_certified_at: now }, msg.script === null ? {} : { script: msg.script }));
      case 'record_research':
        await createCustomerRepository(pool).update(state.id, { research_notes: msg.notes });
        return done({ object: 'research_notes' as const, customer_id: state.id, recorded: true as const });
      case 'get_calendar':
        return done(await calendarConnectionOf(pool, state.id));
      case 'calendar_connect':
        return done(await connectCalendar(calendarDeps, state, msg.credentials));
      case 'calendar_disconnect':
        return done(await disconnectCalendar(calendarDeps, state.id));
      case 'mint_calendar_link':
        return done(await mintCalendarLink(state, msg.email, msg.idempotency));
      case 'assign_number': {
        await withTransaction(pool, async (client) => {
          await mustGet(client, state.id, true);
          await createProvisioningRepository(client).assignNumber({
            accountId: state.accountId,
            mode: state.mode,
            customerId: state.id,
            e164: msg.e164,
            country: state.country,
            kind: msg.kind,
            monthlyCents: msg.kind === 'rented' ? ITEM_PRICES.number_cents_per_month : ITEM_PRICES.caller_id_cents_per_month,
            anchorDay: now.getUTCDate(),
            renewsOn: nextRenewal(dayOf(now), now.getUTCDate()),
            now,
          });
          await refreshReadiness(client, { customerId: state.id }, now);
        });
        const { facts, assessment } = await readiness(pool, state.id);
        return done(readinessView(facts, assessment));
      }
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled customer message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  /**
   * PATCH /v1/customers/{id}: the registered name and the call settings, merged group by group
   * into what is stored (docs/api.md, "Call settings"). One transaction, under the customer's lock.
   */
  async function updateCustomer(state: CustomerState, patch: CustomerPatch, idem?: IdempotencyClaim) {
    return writeTransaction(pool, idem, clock.now(), async (client) => {
      const current = await mustGet(client, state.id, true);
      const fields: Partial<CustomerRow> = {};
      const registeredName = registeredNameInput(patch.registered_name);
      if (registeredName !== undefined) fields.registered_name = registeredName;
      const registeredAddress = registeredAddressInput(patch.registered_address);
      if (registeredAddress !== undefined) fields.registered_address = registeredAddress;
      if (patch.call_settings !== undefined) {
        const merged = mergeCallSettings(current.call_settings, trimmedCallSettingsPatch(patch.call_settings));
        if (callSettingsProblem(merged, current)) throw new Refusal('forward_needs_phone');
        fields.call_settings = merged;
      }
      if (patch.booking !== undefined) fields.booking_settings = mergeBookingSettings(current.booking_settings, patch.booking);
      const row = await createCustomerRepository(client).update(state.id, fields);
      return { created: false, body: customerView(row) };
    });
  }

  /** A console change to the customer row, with readiness re-assessed in the same transaction. */
  async function changeAndAssess(state: CustomerState, fields: Partial<CustomerRow>, always: Partial<CustomerRow> = {}) {
    const now = clock.now();
    await withTransaction(pool, async (client) => {
      const current = await mustGet(client, state.id, true);
      // Certification and connection are facts with a date: the first one stands.
      const fresh = { ...Object.fromEntries(Object.entries(fields).filter(([k]) => current[k as keyof CustomerRow] === null)), ...always };
      if (Object.keys(fresh).length) await createCustomerRepository(client).update(state.id, fresh);
      await refreshReadiness(client, { customerId: state.id }, now);
    });
    const { facts, assessment } = await readiness(pool, state.id);
    return readinessView(facts, assessment);
  }

  return {
    kind: 'customer',
    async load(id) {
      const row = await createCustomerRepository(pool).get(id);
      if (!row) throw new Refusal('customer_not_found');
      return { id, accountId: row.account_id, mode: row.mode, country: row.country };
    },
    isRead: (msg) => READS.has(msg.type),
    receive,
  };
}
