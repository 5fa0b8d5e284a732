import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Client, Queryable } from '../../db/pool.ts';
import { createWebsiteRepository, type WebsiteRow } from '../../db/websites.ts';
import { createCustomerRepository, isUuid, type CustomerRow } from '../../db/customers.ts';
import { recordEvent } from '../../db/events.ts';
import { nextRenewal } from '../../money/rules/renewal.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { siteAddresses, websiteView, type SiteAddresses, type WebsiteView } from './views.ts';
import { customerOriginOf } from '../shared/brand-origin.ts';

/**
 * What every part of the websites room shares (orders.ts, builds.ts, publishing.ts, hosting.ts,
 * serving.ts; websites.ts puts them together): its dependencies, the owner of a request, and the
 * few steps more than one part takes (locking a build of the owner, sending an event, charging a
 * hosting period, refunding the build fee).
 */

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

export interface WebsitesDeps extends Pick<Deps, 'pool' | 'clock' | 'realClock' | 'log' | 'config'> {
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

/** A batch of rows one job run takes at a time. */
export const BATCH = 100;

export type WebsiteEvent = 'website.ready' | 'website.live' | 'website.failed' | 'website.hosting_due' | 'website.suspended';

export type Room = ReturnType<typeof createRoom>;

export function createRoom(deps: WebsitesDeps) {
  const { money, secrets, config, clock } = deps;
  const addresses: SiteAddresses = siteAddresses(config, (message) => secrets.mac('site-preview', message));
  /**
   * The view of an account's builds: a preview is shown to the reseller's customer, so it is at
   * the reseller's verified brand domain when there is one (actors/shared/brand-origin.ts).
   */
  async function viewer(db: Queryable, accountId: string): Promise<(row: WebsiteRow) => WebsiteView> {
    const origin = await customerOriginOf(db, accountId, config.publicUrl);
    return (row) => websiteView(row, addresses, clock.now(), origin);
  }

  /** The view of one build (its account's origin read in `db`). */
  async function view(db: Queryable, row: WebsiteRow): Promise<WebsiteView> {
    return (await viewer(db, row.account_id))(row);
  }

  return {
    deps,
    addresses,
    viewer,
    view,

    async lockCustomer(db: Queryable, owner: WebsiteOwner): Promise<CustomerRow> {
      const customer = await createCustomerRepository(db).lockOwned(owner.customerId, owner.accountId, owner.mode);
      if (!customer) throw new Refusal('customer_not_found');
      return customer;
    },

    /** The build `buildId` of the owner, locked; `website_not_found` for any other. */
    async lockOwn(client: Client, owner: WebsiteOwner, buildId: string): Promise<WebsiteRow> {
      if (!isUuid(buildId)) throw new Refusal('website_not_found');
      const row = await createWebsiteRepository(client).lock(buildId, owner.customerId);
      if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('website_not_found');
      return row;
    },

    async emit(db: Queryable, row: WebsiteRow, type: WebsiteEvent, now: Date) {
      await recordEvent(db, { accountId: row.account_id, mode: row.mode, type, data: await view(db, row), now });
    },

    /** Charges the hosting period starting `periodStart`; `paid` when charged now or before. */
    async chargeHosting(client: Client, row: WebsiteRow, periodStart: string, now: Date) {
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
      // awaiting_top_up: not paid, and a working automatic top-up was asked for: not now, no countdown.
    return { paid: result.outcome === 'charged' || result.outcome === 'already_charged', waiting: result.outcome === 'awaiting_top_up', periodEnd };
    },

    async refundFee(client: Client, row: WebsiteRow, why: string, now: Date): Promise<void> {
      await money.refundItem(client, {
        accountId: row.account_id,
        mode: row.mode,
        customerId: row.customer_id,
        amountCents: row.build_fee_cents,
        reference: `website_build:${row.id}`,
        description: `Website build fee refunded in full (${why})`,
        now,
      });
    },
  };
}
