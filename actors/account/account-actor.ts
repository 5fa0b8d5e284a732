import crypto from 'node:crypto';
import type { Behaviour } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import { createCallRepository } from '../../db/calls.ts';
import { CAP_WAITS } from '../../money/rules/hold-rules.ts';
import { withTransaction, isUniqueViolation, type Client, type Queryable } from '../../db/pool.ts';
import { createAccountRepository, notifyAccountChanged, type AccountRow } from '../../db/accounts.ts';
import { createApiKeyRepository } from '../../db/api-keys.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { recordEvent } from '../../db/events.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { hashToken, mintToken } from '../../runtime/tokens.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { writeTransaction } from '../shared/transaction.ts';
import { assessCoverage } from '../coverage/coverage.ts';
import { staleRegistriesOf } from '../shared/dnc-registries.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { customerView } from '../customer/views.ts';
import { mergeBookingSettings } from '../customer/booking-settings.ts';
import { callSettingsProblem, mergeCallSettings, registeredAddressInput, registeredNameInput, trimmedCallSettingsPatch } from '../customer/call-settings-change.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { KEY_PREFIX, ROTATION_GRACE_MS, keyClock } from './api-key-rules.ts';
import { agreementSignature, checkBrandField, parseAllowlist, parseFutureTimestamp, parseScopes, randomSlugWord, slugify } from './account-rules.ts';
import { accountView, apiKeyView, brandView, adminAccountView, usageView } from './views.ts';
import { businessDetailsView, kybAfterSubmission } from './business-details.ts';
import { createBusinessDetailsRepository, type BusinessDetailsFields } from '../../db/business-details.ts';
import { ledgerReads } from '../../db/money/ledger.ts';
import { activityReads } from '../../db/money/activity.ts';
import { buildBalance } from '../../money/balance-view.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { iso } from '../../runtime/types.ts';
import { parsePhone } from '../shared/phone.ts';
import type { AccountMessage, CreateCustomerInput, CreateKeyInput } from './messages.ts';
import type { Mode } from '../../runtime/types.ts';
import type { BrandField } from '../../db/accounts.ts';
import { createBrandDomainRepository } from '../../db/brand-domains.ts';
import { normaliseDomain } from '../websites/domain-names.ts';
import { domainChange, isServiceName } from './brand-domain-rules.ts';

/**
 * The account actor: the single writer of one reseller account inside a process: its keys,
 * status, limits, brand and the creation of its customers. PostgreSQL holds the truth; the
 * actor keeps only the account's id. Calls, the do-not-call list and appointments are not its
 * business (their services are called directly), nor is naming a customer (the customer directory).
 */
export interface AccountState {
  id: string;
}

const READS = new Set<AccountMessage['type']>([
  'get_account',
  'get_me',
  'list_customers',
  'get_brand',
  'list_keys',
  'get_balance',
  'list_usage',
  'get_activity',
  'get_business_details',
]);

/** What the account actor tells its own process. */
export interface AccountHooks {
  /**
   * A change to the account's keys, status, mode or limits has committed. Called before the change
   * is answered, so this process's credential cache never outlives a revocation or a suspension
   * that has been answered; other processes learn it from the change feed.
   */
  credentialsChanged(accountId: string): void;
}

export function accountBehaviour(deps: Deps & { money: MoneyWriter }, hooks: AccountHooks): Behaviour<AccountMessage, AccountState> {
  // Live facts (an agreement signed, going live) are dated on real time, never on a test clock;
  // so is bonus credit's expiry; money lines stay on the schedule clock (docs/decisions.md, "Real time and the test clock").
  const { pool, clock, realClock, money, config } = deps;
  const accounts = createAccountRepository(pool);

  async function mustGet(db: Queryable, id: string, lock = false): Promise<AccountRow> {
    const repo = createAccountRepository(db);
    const row = lock ? await repo.lock(id) : await repo.get(id);
    if (!row) throw new Refusal('account_not_found');
    return row;
  }

  /** One transaction that changes what the account's keys may do; this process forgets them once it commits. */
  async function credentialChange<T>(id: string, work: (client: Client) => Promise<T>): Promise<T> {
    const result = await withTransaction(pool, work);
    hooks.credentialsChanged(id);
    return result;
  }

  /** A console change of the account row: locked, applied, readiness refreshed, caches told. */
  async function changeAccount(id: string, change: (a: AccountRow, db: Queryable, now: Date) => Promise<Partial<AccountRow>>) {
    const now = clock.now();
    return credentialChange(id, async (client) => {
      const repo = createAccountRepository(client);
      const current = await mustGet(client, id, true);
      const fields = await change(current, client, now);
      const updated = (await repo.update(id, fields))!;
      await refreshReadiness(client, { accountId: id }, now);
      await notifyAccountChanged(client, id);
      return adminAccountView(updated, (await repo.agreementHistory([id])).get(id)!);
    });
  }

  /** The account as the console shows it, with its agreement history. */
  async function adminAccount(id: string) {
    const [row, history] = await Promise.all([mustGet(pool, id), accounts.agreementHistory([id])]);
    return adminAccountView(row, history.get(id)!);
  }

  async function createAccount(id: string, name: string, country: string) {
    const now = clock.now();
    for (let n = 1; ; n++) {
      try {
        const row = await withTransaction(pool, async (client) => {
          const account = await createAccountRepository(client).insert({ id, name, slug: slugify(name, n, randomSlugWord()), country, now });
          await money.openAccount(client, id);
          return account;
        });
        return adminAccountView(row, []);
      } catch (err) {
        if (!isUniqueViolation(err, 'accounts_slug_key') || n >= 10) throw err;
      }
    }
  }

  async function createCustomer(state: AccountState, mode: Mode, input: CreateCustomerInput, idempotency: Parameters<typeof writeTransaction>[1]) {
    const now = clock.now();
    return writeTransaction(pool, idempotency, now, async (client) => {
      const account = await mustGet(client, state.id, true);
      const coverageRepo = createCoverageRepository(client);
      const country = (input.country ?? account.country).toUpperCase();
      const countryRow = await coverageRepo.get(country);
      if (!countryRow || !countryRow.opened) {
        throw new Refusal('country_not_supported', `${country} is not an opened market; GET /v1/coverage lists them.`);
      }
      const timezone = input.timezone ?? countryRow.default_timezone;
      if (!isTimeZone(timezone)) throw new Refusal('invalid_timezone');
      if (input.website_url && !isHttpUrl(input.website_url)) throw new Refusal('invalid_url');
      const phone = input.phone ? businessPhone(input.phone, country) : null;
      const callSettings = mergeCallSettings({}, trimmedCallSettingsPatch(input.call_settings));
      if (callSettingsProblem(callSettings, { phone })) throw new Refusal('forward_needs_phone');
      const bookingSettings = mergeBookingSettings(null, input.booking);
      if (account.max_customers !== null) {
        const count = await createAccountRepository(client).customerCount(state.id, mode);
        if (count >= account.max_customers) {
          throw new Refusal('customer_limit_reached', `The account's ceiling of ${account.max_customers} ${mode} customers is full.`, {
            max_customers: account.max_customers,
            mode,
          });
        }
      }
      let row;
      try {
        row = await createCustomerRepository(client).insert({
          accountId: state.id,
          mode,
          externalRef: input.external_ref ?? null,
          name: input.name.trim(),
          brandName: input.brand_name ?? null,
          websiteUrl: input.website_url ?? null,
          phone,
          country,
          timezone,
          registeredName: registeredNameInput(input.registered_name) ?? null,
          registeredAddress: registeredAddressInput(input.registered_address) ?? null,
          callSettings,
          bookingSettings,
          now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new Refusal('external_ref_taken');
        throw err;
      }
      const stale = staleRegistriesOf(country, await createDncRepository(client).registryImports(country), now);
      return { created: true, body: { ...customerView(row), coverage: assessCoverage(country, countryRow, stale) } };
    });
  }

  async function listCustomers(state: AccountState, mode: Mode, page: Page) {
    const before = await pageStart(pool, page, { table: 'customers', accountId: state.id, mode });
    const rows = await createCustomerRepository(pool).list(state.id, mode, page.limit + 1, before);
    return toList(rows, page.limit, customerView);
  }

  async function createKey(id: string, input: CreateKeyInput) {
    const now = keyClock(input.mode, clock, realClock).now();
    const scopes = parseScopes(input.scopes);
    const ipAllowlist = parseAllowlist(input.ip_allowlist);
    const expiresAt = parseFutureTimestamp(input.expires_at, now);
    return withTransaction(pool, async (client) => {
      const account = await mustGet(client, id, true);
      if (input.mode === 'live' && account.kyb_status !== 'verified') {
        throw new Refusal('kyb_incomplete', 'Live keys can be created once business verification is complete.');
      }
      const { secret, ...stored } = newKeySecret(input.mode);
      const key = await createApiKeyRepository(client).insert({ accountId: id, mode: input.mode, label: input.label, scopes, ipAllowlist, expiresAt, ...stored, now });
      return apiKeyView(key, secret);
    });
  }

  /** A key of the account that still works (rotation and revocation start here). */
  async function usableKey(keys: ReturnType<typeof createApiKeyRepository>, id: string, keyId: string) {
    const key = await keys.get(id, keyId);
    if (!key) throw new Refusal('key_not_found');
    if (key.revoked_at) throw new Refusal('key_already_revoked');
    return key;
  }

  async function rotateKey(id: string, keyId: string) {
    return credentialChange(id, async (client) => {
      const keys = createApiKeyRepository(client);
      const key = await usableKey(keys, id, keyId);
      const now = keyClock(key.mode, clock, realClock).now();
      const { secret, ...stored } = newKeySecret(key.mode);
      const graceUntil = new Date(now.getTime() + ROTATION_GRACE_MS);
      const rotated = await keys.rotate(keyId, { ...stored, graceUntil, now });
      await recordEvent(client, {
        accountId: id,
        mode: key.mode,
        type: 'key.rotated',
        data: { ...apiKeyView(rotated), previous_secret_expires_at: graceUntil.toISOString() },
        now,
      });
      await notifyAccountChanged(client, id);
      return apiKeyView(rotated, secret);
    });
  }

  async function revokeKey(id: string, keyId: string) {
    return credentialChange(id, async (client) => {
      const keys = createApiKeyRepository(client);
      const key = await usableKey(keys, id, keyId);
      const revoked = await keys.revoke(keyId, keyClock(key.mode, clock, realClock).now());
      await notifyAccountChanged(client, id);
      return apiKeyView(revoked);
    });
  }

  /**
   * The reseller's company details for business verification: stored, and verification set as
   * `kybAfterSubmission` decides (pending for the operator, unless a verified business changed
   * nothing of its identity), with readiness refreshed, in one transaction.
   */
  async function submitBusinessDetails(id: string, details: BusinessDetailsFields, by: { userId: string; email: string }) {
    const now = realClock.now();
    return credentialChange(id, async (client) => {
      const account = await mustGet(client, id, true);
      const repo = createBusinessDetailsRepository(client);
      const before = await repo.get(id);
      const status = kybAfterSubmission(account.kyb_status, before, details);
      const stored = await repo.put(id, details, by, now);
      const fields: Partial<AccountRow> = status === account.kyb_status ? {} : { kyb_status: status, kyb_note: null };
      const updated = (await createAccountRepository(client).update(id, fields))!;
      if (status !== account.kyb_status) {
        await refreshReadiness(client, { accountId: id }, clock.now());
        await notifyAccountChanged(client, id);
      }
      return businessDetailsView(stored, updated);
    });
  }

  /**
   * PATCH of the brand. A new domain (normalised, lower-case) starts a pending claim and ends any
   * verification of the old one; a name the service uses itself, or one another account's brand
   * or a customer's website holds (verified by DNS), is refused. The DNS look comes after the
   * commit (BrandDomains.check).
   */
  async function updateBrand(id: string, patch: Partial<Record<BrandField, string | null>>, idempotency: Parameters<typeof writeTransaction>[1]) {
    for (const [field, value] of Object.entries(patch)) checkBrandField(field as BrandField, value ?? null);
    const { domain, ...fields } = patch;
    const name = domain ? normaliseDomain(domain)! : null;
    if (name && isServiceName(name, { publicHost: new URL(config.publicUrl).hostname, sitesDomain: config.sitesDomain })) {
      throw new Refusal('invalid_brand_field', `domain ${name} is the service's own name; use a domain of the reseller.`);
    }
    const now = clock.now();
    return writeTransaction(pool, idempotency, now, async (client) => {
      const current = await mustGet(client, id, true);
      const change = domain === undefined ? null : domainChange(current, name, now);
      if (change && name) {
        const holder = await createBrandDomainRepository(client).heldElsewhere(name, id);
        if (holder) {
          throw new Refusal('brand_domain_taken', holder === 'brand'
            ? `${name} is already the verified domain of another account's brand.`
            : `${name} is already the verified domain of a customer's website.`);
        }
      }
      const row = (await createAccountRepository(client).update(id, { ...fields, ...change }))!;
      return { created: false, body: brandView(row, config.sitesDomain) };
    });
  }

  /** A console money action: one transaction on an account that must exist. */
  async function moneyChange<T>(id: string, work: (client: import('../../db/pool.ts').Client, now: Date) => Promise<T>): Promise<T> {
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      await mustGet(client, id);
      return work(client, now);
    });
  }

  async function listUsage(id: string, mode: Mode, page: Page, customerId: string | null) {
    const before = await pageStart(pool, page, { table: 'ledger_entries', accountId: id, mode });
    const rows = await ledgerReads(pool).listLines(id, mode, page.limit + 1, before, customerId);
    return toList(rows, page.limit, usageView);
  }

  async function receive(state: AccountState, msg: AccountMessage): Promise<{ state: AccountState; reply: unknown }> {
    const id = state.id;
    const done = (reply: unknown) => ({ state, reply });
    switch (msg.type) {
      case 'create_account':
        return done(await createAccount(id, msg.name, msg.country));
      case 'get_account':
        return done(await adminAccount(id));
      case 'get_me': {
        const [account, key, count] = await Promise.all([
          mustGet(pool, id),
          createApiKeyRepository(pool).get(id, msg.keyId),
          accounts.customerCount(id, msg.mode),
        ]);
        if (!key) throw new Refusal('invalid_api_key');
        return done(accountView(account, key, count));
      }
      case 'create_customer':
        return done(await createCustomer(state, msg.mode, msg.input, msg.idempotency));
      case 'list_customers':
        return done(await listCustomers(state, msg.mode, msg.page));
      case 'get_brand':
        return done(brandView(await mustGet(pool, id), config.sitesDomain));
      case 'update_brand':
        return done(await updateBrand(id, msg.patch, msg.idempotency));
      case 'create_key':
        return done(await createKey(id, msg.input));
      case 'list_keys': {
        await mustGet(pool, id);
        const keys = await createApiKeyRepository(pool).list(id);
        return done(toList(keys, keys.length, (k) => apiKeyView(k)));
      }
      case 'rotate_key':
        return done(await rotateKey(id, msg.keyId));
      case 'revoke_key':
        return done(await revokeKey(id, msg.keyId));
      case 'set_kyb':
        return done(await changeAccount(id, async () => ({ kyb_status: msg.status, kyb_note: msg.note ?? null })));
      case 'sign_agreement':
        return done(
          await changeAccount(id, async (a, db) => {
            const signature = agreementSignature(a, msg.version, realClock.now());
            if (!signature) return {};
            await createAccountRepository(db).insertAgreementSignature(id, signature.version, signature.signedAt, msg.signer ?? null);
            return { agreement_version: signature.version, agreement_signed_at: signature.signedAt };
          }),
        );
      case 'get_business_details': {
        const [account, details] = await Promise.all([mustGet(pool, id), createBusinessDetailsRepository(pool).get(id)]);
        return done(businessDetailsView(details, account));
      }
      case 'submit_business_details':
        return done(await submitBusinessDetails(id, msg.details, msg.by));
      case 'go_live':
        return done(
          await changeAccount(id, async (a) => {
            const missing = [
              a.kyb_status !== 'verified' && 'business verification',
              a.agreement_signed_at === null && 'the signed reseller agreement',
            ].filter(Boolean);
            if (missing.length) throw new Refusal('go_live_blocked', `The account cannot go live without ${missing.join(' and ')}.`, { missing });
            return { mode: 'live', went_live_at: a.went_live_at ?? realClock.now() };
          }),
        );
      case 'set_status':
        return done(await changeAccount(id, async () => ({ status: msg.status })));
      case 'update_limits':
        return done(
          await changeAccount(id, async (_a, db, now) => {
            // A cap or ceiling changed: requests held back by one try again at once.
            await createCallRepository(db).wakeWaiting({ accountId: id, reasons: CAP_WAITS, now });
            return msg.patch as Partial<AccountRow>;
          }),
        );
      case 'get_balance':
        await mustGet(pool, id);
        return done(await buildBalance(pool, id, msg.mode, clock.now(), realClock.now()));
      case 'list_usage':
        return done(await listUsage(id, msg.mode, msg.page, msg.customerId));
      case 'top_up':
        return done(await moneyChange(id, async (client, now) => {
          const lines = await money.topUp(client, {
            accountId: id,
            amountCents: msg.amountCents,
            paymentReference: msg.paymentReference ?? `card_${crypto.randomUUID()}`,
            description: 'Top-up (card)',
            now,
          });
          return { object: 'top_up' as const, lines: lines.map(usageView), balance: await buildBalance(client, id, 'live', now, realClock.now()) };
        }));
      case 'set_auto_top_up':
        return done(await moneyChange(id, async (client, now) => {
          await money.setAutoTopUp(client, id, { thresholdCents: msg.thresholdCents, amountCents: msg.amountCents });
          return buildBalance(client, id, 'live', now, realClock.now());
        }));
      case 'refund':
        return done(await moneyChange(id, async (client, now) => {
          if (msg.customerId && (await createCustomerRepository(client).get(msg.customerId))?.account_id !== id) {
            throw new Refusal('customer_not_found');
          }
          const line = await money.refund(client, {
            accountId: id,
            customerId: msg.customerId,
            amountCents: msg.amountCents,
            reference: msg.reference,
            description: msg.description ?? 'Refund',
            now,
          });
          return { object: 'refund' as const, line: usageView(line), balance: await buildBalance(client, id, 'live', now, realClock.now()) };
        }));
      case 'start_call':
        // A customer of another account (or mode) is not found, as for a refund: the writer refuses
        // it (customer_not_found) when its hold statement finds no such customer, without a read before.
        return done(await money.startCall(pool, { accountId: id, mode: msg.mode, customerId: msg.customerId, reference: msg.reference, now: clock.now(), scheduleNow: msg.scheduleNow }));
      case 'end_call':
        return done(await money.endCall(pool, { accountId: id, reference: msg.reference, durationSeconds: msg.durationSeconds, now: clock.now() }));
      case 'get_activity': {
        await mustGet(pool, id);
        const rows = await activityReads(pool).listActivity(id, msg.limit);
        return done(toList(rows, msg.limit, (r) => ({ object: 'activity' as const, ...r, created_at: iso(r.created_at) })));
      }
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled account message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  return {
    kind: 'account',
    load: async (id) => ({ id }),
    isRead: (msg) => READS.has(msg.type),
    receive,
  };
}

/** A new key secret and what is stored of it: its hash, its prefix (mode + 4) and its last four characters. */
function newKeySecret(mode: Mode) {
  const secret = mintToken(KEY_PREFIX[mode]);
  return { secret, secretHash: hashToken(secret), prefix: secret.slice(0, KEY_PREFIX[mode].length + 4), lastFour: secret.slice(-4) };
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz.includes('/') || tz === 'UTC';
  } catch {
    return false;
  }
}

/** A customer's own number: valid (full metadata) and in its country, as E.164; else `invalid_phone_number`. */
function businessPhone(text: string, country: string): string {
  const parsed = parsePhone(text, country);
  if (!parsed.ok || parsed.country !== country) {
    throw new Refusal('invalid_phone_number', `phone must be a valid telephone number in the customer's country (${country}), such as its number in international form.`);
  }
  return parsed.e164;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
