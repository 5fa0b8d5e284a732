import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction, isUniqueViolation, type Client, type Queryable } from '../../db/pool.ts';
import { createWebsiteRepository, type WebsiteRow } from '../../db/websites.ts';
import { recurringDueBy } from '../../db/recurring-due.ts';
import { createCustomerRepository, isUuid, type CustomerRow } from '../../db/customers.ts';
import { spendableCents } from '../../money/balance-view.ts';
import { recordEvent } from '../../db/events.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import { addDays, dayOf, inNoticeWindow, nextRenewal, reached, RELEASE_COUNTDOWN_DAYS, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { pageStart, toList, type List, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { siteAddresses, websiteView, type SiteAddresses, type WebsiteView } from './views.ts';

/**
 * Websites (issue 15): a customer's one-page site, ordered, built in the background, reviewed,
 * taken live, hosted monthly, counted down and suspended when hosting is unpaid, and purged. A
 * plain module like numbers: every change locks the build's row (a new one: the customer's) in
 * the transaction that makes it; builds are claimed by any builder process with SKIP LOCKED and a
 * claim that lapses if its process dies. Money moves only through the money writer.
 */

/** A suspended site stays recoverable this long before its page is purged (spec: 90 days). */
export const PURGE_AFTER_DAYS = 90;
/** How long a builder may hold a build before another may take it over. */
export const BUILD_CLAIM_MS = 2 * 60_000;
/** A build whose page maker crashed is tried again after this long times its attempts. */
export const BUILD_RETRY_MS = 5_000;
/** Builds tried this many times (each a process that died or a page that could not be made) end failed. */
export const MAX_BUILD_ATTEMPTS = 3;
/** An unverified domain is checked again after this long. */
export const DOMAIN_RECHECK_MS = 10 * 60_000;
/** A verified domain is looked at again after this long (its CNAME may have been taken away). */
export const DOMAIN_REVERIFY_MS = 6 * 60 * 60_000;
/** DNS lookups made at once by one run (each can take seconds when a server does not answer). */
const DOMAIN_CHECKS_AT_ONCE = 10;
const BATCH = 100;

/** What a build is made from: the customer, its language, its number, the briefs. */
export interface BuildInput {
  customer: Pick<CustomerRow, 'id' | 'name' | 'brand_name' | 'country' | 'website_url' | 'mode'>;
  /** The customer's calling language (its country's), the page's language. */
  locale: string;
  /** The reseller's own brand name, which the page never shows unless the brief does. */
  resellerName: string | null;
  /** The customer's working number in its country (to click-to-call), or null. */
  phoneE164: string | null;
  brief: string | null;
  /** Each revision's brief, in order: the last one is the change asked for now. */
  revisionBriefs: string[];
}

/** Makes the page (actors/websites/site-builder.ts), or says why it cannot. */
export interface SiteBuilder {
  build(input: BuildInput): Promise<{ ok: true; html: string } | { ok: false; reason: string }>;
}

/** Whether `domain`'s CNAME points at `target` (the DNS check of a custom domain). */
export type CnameCheck = (domain: string, target: string) => Promise<boolean>;

export interface WebsitesDeps extends Pick<Deps, 'pool' | 'clock' | 'log' | 'config'> {
  money: MoneyWriter;
  secrets: Pick<SecretBox, 'mac'>;
  builder: SiteBuilder;
  cnameCheck: CnameCheck;
}

export interface WebsiteOwner {
  accountId: string;
  mode: Mode;
  customerId: string;
}

/** The DNS record that points a customer's domain at its site. */
export interface DnsRecord {
  object: 'dns_record';
  type: 'CNAME';
  name: string;
  value: string;
}

export type Websites = ReturnType<typeof createWebsites>;

/** A host name a customer may point at a site: letters, digits and hyphens in labels, a dot, no IP. */
export function normaliseDomain(text: string): string | null {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) return null;
  return name;
}

/** A slug for the site's address: the business name's letters, then a random tail (never guessable from the name alone). */
export function slugFor(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${base || 'site'}-${crypto.randomBytes(3).toString('hex')}`;
}

export function createWebsites(deps: WebsitesDeps) {
  const { pool, clock, log, config, money, secrets, builder, cnameCheck } = deps;
  const addresses: SiteAddresses = siteAddresses(config, (id) => secrets.mac('site-preview', id));
  const view = (row: WebsiteRow) => websiteView(row, addresses);

  async function lockCustomer(db: Queryable, owner: WebsiteOwner): Promise<CustomerRow> {
    const customer = await createCustomerRepository(db).lockOwned(owner.customerId, owner.accountId, owner.mode);
    if (!customer) throw new Refusal('customer_not_found');
    return customer;
  }

  async function lockOwn(client: Client, owner: WebsiteOwner, buildId: string): Promise<WebsiteRow> {
    if (!isUuid(buildId)) throw new Refusal('website_not_found');
    const row = await createWebsiteRepository(client).lock(buildId, owner.customerId);
    if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('website_not_found');
    return row;
  }

  async function emit(db: Queryable, row: WebsiteRow, type: 'website.ready' | 'website.live' | 'website.failed' | 'website.hosting_due' | 'website.suspended', now: Date) {
    await recordEvent(db, { accountId: row.account_id, mode: row.mode, type, data: view(row), now });
  }

  /** Charges the hosting period starting `periodStart`; `paid` when charged now or before. */
  async function chargeHosting(client: Client, row: WebsiteRow, periodStart: string, now: Date) {
    const periodEnd = nextRenewal(periodStart, row.anchor_day ?? Number(periodStart.slice(8, 10)));
    const result = await money.chargeRecurring(client, {
      accountId: row.account_id,
      mode: row.mode,
      customerId: row.customer_id,
      item: 'website_hosting',
      itemId: row.id,
      amountCents: row.hosting_cents_per_month,
      periodStart,
      periodEnd,
      description: `Website hosting, ${periodStart} to ${periodEnd}`,
      now,
    });
    return { paid: result.outcome !== 'insufficient_balance', periodEnd };
  }

  async function refundFee(client: Client, row: WebsiteRow, why: string, now: Date): Promise<void> {
    await money.refundItem(client, {
      accountId: row.account_id,
      mode: row.mode,
      customerId: row.customer_id,
      amountCents: row.build_fee_cents,
      reference: `website_build:${row.id}`,
      description: `Website build fee refunded in full (${why})`,
      now,
    });
  }

  /** The build's end when no page can be made: failed, the fee back as its own line, `website.failed`. */
  async function failBuild(client: Client, row: WebsiteRow, reason: string, now: Date): Promise<WebsiteRow> {
    const repo = createWebsiteRepository(client);
    // A revision of a site already delivered fails alone: the site stays as it was, nothing refunded.
    if (row.status !== 'building') {
      log.warn({ website_id: row.id, reason }, 'a website revision could not be built; the site stays as it was');
      return repo.update(row.id, { build_wanted: false, build_claimed_until: null, failure_reason: reason }, now);
    }
    const failed = await repo.update(row.id, { status: 'failed', build_wanted: false, build_claimed_until: null, failed_at: now, failure_reason: reason }, now);
    await refundFee(client, failed, 'the build could not be completed', now);
    await emit(client, failed, 'website.failed', now);
    log.warn({ website_id: row.id, reason }, 'a website build failed; its fee was refunded');
    return failed;
  }

  /** One build: claimed (its own transaction), made outside any transaction, then recorded if still wanted. */
  async function buildOne(): Promise<boolean> {
    const now = clock.now();
    const claimed = await withTransaction(pool, (client) => createWebsiteRepository(client).claimBuild(now, new Date(now.getTime() + BUILD_CLAIM_MS)));
    if (!claimed) return false;
    if (claimed.build_attempts > MAX_BUILD_ATTEMPTS) {
      await withTransaction(pool, async (client) => {
        const row = await createWebsiteRepository(client).lock(claimed.id);
        if (row?.build_wanted) await failBuild(client, row, 'build_attempts_exhausted', clock.now());
      });
      return true;
    }
    const customer = await createCustomerRepository(pool).get(claimed.customer_id);
    // The page's language, the reseller's name (kept off the page) and the number to call.
    const context = await createWebsiteRepository(pool).buildContext(claimed.customer_id);
    let outcome: { ok: true; html: string } | { ok: false; reason: string };
    try {
      outcome = customer
        ? await builder.build({
            customer,
            locale: context.locale ?? 'en-US',
            resellerName: context.resellerName,
            phoneE164: context.phoneE164,
            brief: claimed.brief,
            revisionBriefs: claimed.revision_briefs,
          })
        : { ok: false, reason: 'customer_gone' };
    } catch (err) {
      // A crash of the page maker: the claim lapses and another try follows (up to MAX_BUILD_ATTEMPTS).
      log.error({ err, website_id: claimed.id, attempt: claimed.build_attempts }, 'a website build crashed; it is tried again');
      // Our claim only (a slow crash may find its claim lapsed and taken over), and not at once.
      const now = clock.now();
      await createWebsiteRepository(pool).deferClaim(claimed.id, claimed.build_claimed_until, new Date(now.getTime() + BUILD_RETRY_MS * claimed.build_attempts), now);
      return true;
    }
    await withTransaction(pool, async (client) => {
      const done = clock.now();
      const repo = createWebsiteRepository(client);
      const row = await repo.lock(claimed.id);
      // Cancelled meanwhile, or a newer revision asked for (it is built next): this page is not kept.
      if (!row || !row.build_wanted || row.revision_briefs.length !== claimed.revision_briefs.length) return;
      if (!outcome.ok) {
        await failBuild(client, row, outcome.reason, done);
        return;
      }
      const built = await repo.update(
        row.id,
        { html: outcome.html, built_at: done, build_wanted: false, build_claimed_until: null, failure_reason: null, ...(row.status === 'building' ? { status: 'ready' as const } : {}) },
        done,
      );
      await emit(client, built, 'website.ready', done);
      log.info({ website_id: row.id, bytes: Buffer.byteLength(outcome.html) }, 'website built');
    });
    return true;
  }

  /** One hosting look at a live site (claimed by the job): notice, renewal, or the countdown. */
  async function renewOne(client: Client, id: string, today: string, now: Date): Promise<boolean> {
    const repo = createWebsiteRepository(client);
    let row = await repo.claim(id);
    if (!row || (row.status !== 'live' && row.status !== 'hosting_due') || !row.hosting_renews_on) return false;
    if (!reached(today, row.hosting_renews_on)) {
      if (!inNoticeWindow(today, row.hosting_renews_on) || row.notice_sent_for === row.hosting_renews_on) return false;
      // Every hosting and rent of the account falling due by this renewal competes for the same money.
      const due = await recurringDueBy(client, row.account_id, row.mode, row.hosting_renews_on);
      const short = (await spendableCents(client, row.account_id, row.mode)) < Math.max(due, row.hosting_cents_per_month);
      row = await repo.update(
        row.id,
        short
          ? { notice_sent_for: row.hosting_renews_on, status: 'hosting_due', suspend_due_on: addDays(row.hosting_renews_on, RELEASE_COUNTDOWN_DAYS) }
          : { notice_sent_for: row.hosting_renews_on },
        now,
      );
      if (short) await emit(client, row, 'website.hosting_due', now);
      return short;
    }
    let changed = false;
    while (row.hosting_renews_on && reached(today, row.hosting_renews_on)) {
      const { paid, periodEnd } = await chargeHosting(client, row, row.hosting_renews_on, now);
      if (!paid) {
        if (row.status === 'live') {
          row = await repo.update(
            row.id,
            // Never a countdown shorter than 14 days, if the service was away past the renewal.
            { status: 'hosting_due', suspend_due_on: addDays(today > row.hosting_renews_on ? today : row.hosting_renews_on, RELEASE_COUNTDOWN_DAYS), notice_sent_for: row.hosting_renews_on },
            now,
          );
          await emit(client, row, 'website.hosting_due', now);
          return true;
        }
        return changed;
      }
      row = await repo.update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null }, now);
      changed = true;
    }
    return changed;
  }

  /** One domain's DNS look, recorded; true when its verification changed. */
  async function checkOneDomain(site: { id: string; domain: string; slug: string; verified: boolean }, now: Date): Promise<boolean> {
    let points: boolean | null = null;
    try {
      points = await cnameCheck(site.domain, addresses.cnameTarget(site.slug));
    } catch (err) {
      log.warn({ err, website_id: site.id, domain: site.domain }, 'a domain could not be looked up; checked again later');
    }
    return withTransaction(pool, async (client) => {
      const repo = createWebsiteRepository(client);
      const row = await repo.lock(site.id);
      if (!row || row.domain !== site.domain) return false;
      const verifiedNow = points === null ? row.domain_verified_at !== null : points;
      const change = verifiedNow !== (row.domain_verified_at !== null);
      await repo.update(row.id, { domain_checked_at: now, ...(change ? { domain_verified_at: verifiedNow ? now : null } : {}) }, now);
      if (change) log.info({ website_id: row.id, domain: row.domain, verified: verifiedNow }, verifiedNow ? 'a domain now points at its site' : 'a domain no longer points at its site; it is not served there any more');
      return change;
    });
  }

  return {
    addresses,

    /** POST /v1/customers/{id}/websites: the fee charged, the build queued. */
    async order(owner: WebsiteOwner, o: { brief?: string; idempotency?: IdempotencyClaim }): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, o.idempotency, now, async (client) => {
        const customer = await lockCustomer(client, owner);
        const id = crypto.randomUUID();
        const row = await createWebsiteRepository(client).insert({
          id,
          accountId: owner.accountId,
          mode: owner.mode,
          customerId: owner.customerId,
          slug: slugFor(customer.brand_name ?? customer.name),
          brief: o.brief?.trim() || null,
          buildFeeCents: ITEM_PRICES.website_build_cents,
          hostingCentsPerMonth: ITEM_PRICES.website_hosting_cents_per_month,
          now,
        });
        const charged = await money.chargeItem(client, {
          accountId: owner.accountId,
          mode: owner.mode,
          customerId: owner.customerId,
          cause: 'website_build',
          amountCents: row.build_fee_cents,
          reference: `website_build:${id}`,
          description: 'Website build (one page), refunded in full if never delivered',
          now,
        });
        if (charged.outcome === 'insufficient_balance') {
          throw new Refusal('insufficient_balance', `The balance cannot cover the build fee (${row.build_fee_cents} cents); nothing was ordered or charged.`);
        }
        return { created: true, body: view(row) };
      });
    },

    async get(owner: WebsiteOwner, buildId: string): Promise<WebsiteView> {
      if (!isUuid(buildId)) throw new Refusal('website_not_found');
      const row = await createWebsiteRepository(pool).get(owner.customerId, buildId);
      if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('website_not_found');
      return view(row);
    },

    async list(owner: WebsiteOwner, page: Page): Promise<List<WebsiteView>> {
      const before = await pageStart(pool, page, { table: 'website_builds', customerId: owner.customerId });
      return toList(await createWebsiteRepository(pool).list(owner.customerId, page.limit + 1, before), page.limit, view);
    },

    /** POST …/publish: a ready site goes live at its address; the first month of hosting is charged now. */
    async publish(owner: WebsiteOwner, buildId: string, idempotency?: IdempotencyClaim): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        let row = await lockOwn(client, owner, buildId);
        if (row.status === 'live' || row.status === 'hosting_due') return { created: false, body: view(row) };
        if (row.status !== 'ready') throw new Refusal('website_not_ready', row.status === 'building' ? 'The site is still being built; publish it once it is ready.' : `A ${row.status} site cannot go live.`);
        const today = dayOf(now);
        row = await createWebsiteRepository(client).update(row.id, { anchor_day: Number(today.slice(8, 10)) }, now);
        const { paid, periodEnd } = await chargeHosting(client, row, today, now);
        if (!paid) throw new Refusal('insufficient_balance', `The balance cannot cover the first month of hosting (${row.hosting_cents_per_month} cents); the site stays ready.`);
        row = await createWebsiteRepository(client).update(row.id, { status: 'live', live_at: now, hosting_renews_on: periodEnd }, now);
        await emit(client, row, 'website.live', now);
        return { created: false, body: view(row) };
      });
    },

    /** POST …/revision: the site rebuilt with a change; one revision is included. */
    async revise(owner: WebsiteOwner, buildId: string, brief: string, idempotency?: IdempotencyClaim): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await lockOwn(client, owner, buildId);
        if (row.status === 'building' || row.build_wanted) throw new Refusal('website_not_ready', 'The site is being built; ask for a revision once it is ready.');
        if (!['ready', 'live', 'hosting_due'].includes(row.status)) throw new Refusal('website_not_ready', `A ${row.status} site cannot be revised.`);
        if (row.revision_briefs.length >= row.revisions_included) throw new Refusal('revision_limit_reached');
        const revised = await createWebsiteRepository(client).update(
          row.id,
          { revision_briefs: [...row.revision_briefs, brief.trim()], build_wanted: true, build_claimed_until: null, build_attempts: 0, ...(row.status === 'ready' ? { status: 'building' as const } : {}) },
          now,
        );
        return { created: false, body: view(revised) };
      });
    },

    /** POST …/domain: the customer's own domain, and the CNAME that points it at the site. */
    async setDomain(owner: WebsiteOwner, buildId: string, text: string, idempotency?: IdempotencyClaim): Promise<Written<DnsRecord>> {
      const now = clock.now();
      const domain = normaliseDomain(text);
      if (!domain) throw new Refusal('invalid_domain');
      if (config.sitesDomain && (domain === config.sitesDomain || domain.endsWith(`.${config.sitesDomain}`))) throw new Refusal('invalid_domain', 'That name is the service\'s own; use a domain of the customer.');
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await lockOwn(client, owner, buildId);
        if (['cancelled', 'failed', 'purged'].includes(row.status)) throw new Refusal('website_not_ready', `A ${row.status} site takes no domain.`);
        if (row.domain !== domain) {
          await client.query('SAVEPOINT website_domain');
          try {
            await createWebsiteRepository(client).update(row.id, { domain, domain_verified_at: null, domain_checked_at: null }, now);
            await client.query('RELEASE SAVEPOINT website_domain');
          } catch (err) {
            if (!isUniqueViolation(err, 'website_builds_domain')) throw err;
            await client.query('ROLLBACK TO SAVEPOINT website_domain');
            throw new Refusal('domain_taken');
          }
        }
        return { created: false, body: { object: 'dns_record' as const, type: 'CNAME' as const, name: domain, value: addresses.cnameTarget(row.slug) } };
      });
    },

    /** DELETE: before delivery cancelled with the fee back; once live, taken down with hosting stopped. */
    async cancel(owner: WebsiteOwner, buildId: string): Promise<WebsiteView> {
      const now = clock.now();
      return withTransaction(pool, async (client) => {
        const row = await lockOwn(client, owner, buildId);
        if (['failed', 'cancelled', 'purged'].includes(row.status)) return view(row);
        const delivered = !(row.status === 'building' || row.status === 'ready');
        const cancelled = await createWebsiteRepository(client).update(
          row.id,
          { status: 'cancelled', cancelled_at: now, build_wanted: false, build_claimed_until: null, hosting_renews_on: null, suspend_due_on: null, purge_due_on: null },
          now,
        );
        if (!delivered) await refundFee(client, row, 'cancelled before delivery', now);
        log.info({ website_id: row.id, delivered }, delivered ? 'website taken down; hosting stopped' : 'website order cancelled; fee refunded');
        return view(cancelled);
      });
    },

    /** The builder's loop body: builds waiting, one at a time, until none waits. Returns how many. */
    async buildWaiting(limit = BATCH): Promise<number> {
      let done = 0;
      while (done < limit && (await buildOne())) done++;
      return done;
    },

    /** The hosting job: renewals due and early warnings, each site in its own transaction. */
    async renewHosting(now: Date): Promise<number> {
      const today = dayOf(now);
      const noticeUntil = addDays(today, RENEWAL_NOTICE_DAYS);
      let done = 0;
      let after = 0;
      for (;;) {
        const due = await createWebsiteRepository(pool).dueForHosting(today, noticeUntil, BATCH, after);
        for (const { id, seq } of due) {
          after = seq;
          if (await withTransaction(pool, (client) => renewOne(client, id, today, now))) done++;
        }
        if (due.length < BATCH) return done;
      }
    },

    /** Sites whose countdown ended go offline (nothing deleted) with `website.suspended`. */
    async suspendOverdue(now: Date): Promise<number> {
      const today = dayOf(now);
      let done = 0;
      for (const id of await createWebsiteRepository(pool).dueForSuspension(today, BATCH)) {
        const did = await withTransaction(pool, async (client) => {
          const row = await createWebsiteRepository(client).claim(id);
          if (!row || row.status !== 'hosting_due' || !row.suspend_due_on || !reached(today, row.suspend_due_on) || !row.hosting_renews_on) return false;
          // Money that came while a job held the site (a top-up skips a held site) pays it now.
          const { paid, periodEnd } = await chargeHosting(client, row, row.hosting_renews_on, now);
          if (paid) {
            await createWebsiteRepository(client).update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null }, now);
            return false;
          }
          const suspended = await createWebsiteRepository(client).update(row.id, { status: 'suspended', suspended_at: now, purge_due_on: addDays(today, PURGE_AFTER_DAYS) }, now);
          await emit(client, suspended, 'website.suspended', now);
          return true;
        });
        if (did) done++;
      }
      return done;
    },

    /** Suspended sites past their 90 days: the page is deleted for good. */
    async purgeOverdue(now: Date): Promise<number> {
      const today = dayOf(now);
      let done = 0;
      for (const id of await createWebsiteRepository(pool).dueForPurge(today, BATCH)) {
        const did = await withTransaction(pool, async (client) => {
          const row = await createWebsiteRepository(client).claim(id);
          if (!row || row.status !== 'suspended' || !row.purge_due_on || !reached(today, row.purge_due_on)) return false;
          await createWebsiteRepository(client).update(row.id, { status: 'purged', purged_at: now, html: null, hosting_renews_on: null, build_wanted: false }, now);
          log.info({ website_id: row.id }, 'a suspended website was purged after 90 days');
          return true;
        });
        if (did) done++;
      }
      return done;
    },

    /** Money came in (money writer reaction): unpaid hosting is taken and the site returns at its address. */
    async fundsAdded(client: Client, accountId: string, now: Date): Promise<void> {
      const repo = createWebsiteRepository(client);
      for (const row of await repo.claimUnpaidOf(accountId)) {
        if (!row.hosting_renews_on) continue;
        // In the countdown the period that went unpaid (or, after a notice, the one coming) is
        // paid; a suspended site starts a fresh month today (the offline months are not billed).
        const today = dayOf(now);
        const periodStart = row.status === 'suspended' ? today : row.hosting_renews_on;
        const anchored = row.status === 'suspended' ? await repo.update(row.id, { anchor_day: Number(today.slice(8, 10)) }, now) : row;
        const { paid, periodEnd } = await chargeHosting(client, anchored, periodStart, now);
        if (!paid) continue;
        await repo.update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null, purge_due_on: null, suspended_at: null }, now);
      }
    },

    /**
     * Customers' domains checked against DNS, a few at a time: an unverified one is verified once
     * its CNAME points at the site; a verified one is looked at again every few hours and
     * unverified if DNS now says it points elsewhere (a lookup that fails changes nothing).
     * Returns how many changed.
     */
    async checkDomains(now: Date): Promise<number> {
      const due = await createWebsiteRepository(pool).domainsToCheck(new Date(now.getTime() - DOMAIN_RECHECK_MS), new Date(now.getTime() - DOMAIN_REVERIFY_MS), BATCH);
      let changed = 0;
      for (let i = 0; i < due.length; i += DOMAIN_CHECKS_AT_ONCE) {
        const outcomes = await Promise.all(due.slice(i, i + DOMAIN_CHECKS_AT_ONCE).map((site) => checkOneDomain(site, now)));
        changed += outcomes.filter(Boolean).length;
      }
      return changed;
    },

    /** What a request for a site serves: by slug or by a verified domain (`servedSite` in views decides the answer). */
    async bySlug(slug: string) {
      return createWebsiteRepository(pool).servedBySlug(slug);
    },
    async byDomain(host: string) {
      return createWebsiteRepository(pool).servedByDomain(host);
    },
    /** The preview of build `id` when `token` is its own (unlisted, never indexed). */
    async preview(id: string, token: string): Promise<{ html: string; mode: Mode } | null> {
      if (!isUuid(id) || !addresses.previewTokenMatches(id, token)) return null;
      return createWebsiteRepository(pool).preview(id);
    },
    /** Caddy's on-demand TLS asks before it gets a certificate: yes only for verified domains of served sites. */
    async allowsCertificate(host: string): Promise<boolean> {
      const name = normaliseDomain(host);
      if (!name) return false;
      return createWebsiteRepository(pool).isServedDomain(name);
    },
  };
}
