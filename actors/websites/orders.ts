import crypto from 'node:crypto';
import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction } from '../../db/pool.ts';
import { createWebsiteRepository } from '../../db/websites.ts';
import { isUuid } from '../../db/customers.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import { pageStart, toList, type List, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { nameSlug } from '../shared/slug.ts';
import type { Room, WebsiteOwner } from './room.ts';
import type { WebsiteView } from './views.ts';

/**
 * A customer's website orders: ordering (the fee charged, the build queued), reading, asking for
 * the included revision, and cancelling (the fee back before delivery; taken down after).
 */

/** A slug for the site's address: the business name's letters, then a random tail (never guessable from the name alone). */
export function slugFor(name: string): string {
  return `${nameSlug(name) || 'site'}-${crypto.randomBytes(3).toString('hex')}`;
}

export function createWebsiteOrders(room: Room) {
  const { pool, clock, log } = room.deps;
  const { view } = room;
  const { money } = room.deps;

  return {
    /** POST /v1/customers/{id}/websites: the fee charged, the build queued. */
    async order(owner: WebsiteOwner, o: { brief?: string; idempotency?: IdempotencyClaim }): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, o.idempotency, now, async (client) => {
        const customer = await room.lockCustomer(client, owner);
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
        return { created: true, body: await view(client, row) };
      });
    },

    async get(owner: WebsiteOwner, buildId: string): Promise<WebsiteView> {
      if (!isUuid(buildId)) throw new Refusal('website_not_found');
      const row = await createWebsiteRepository(pool).get(owner.customerId, buildId);
      if (!row || row.account_id !== owner.accountId || row.mode !== owner.mode) throw new Refusal('website_not_found');
      return view(pool, row);
    },

    async list(owner: WebsiteOwner, page: Page): Promise<List<WebsiteView>> {
      const before = await pageStart(pool, page, { table: 'website_builds', customerId: owner.customerId });
      const [rows, viewOf] = await Promise.all([createWebsiteRepository(pool).list(owner.customerId, page.limit + 1, before), room.viewer(pool, owner.accountId)]);
      return toList(rows, page.limit, viewOf);
    },

    /** POST …/revision: the site rebuilt with a change; one revision is included. */
    async revise(owner: WebsiteOwner, buildId: string, brief: string, idempotency?: IdempotencyClaim): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await room.lockOwn(client, owner, buildId);
        if (row.status === 'building' || row.build_wanted) throw new Refusal('website_not_ready', 'The site is being built; ask for a revision once it is ready.');
        if (!['ready', 'live', 'hosting_due'].includes(row.status)) throw new Refusal('website_not_ready', `A ${row.status} site cannot be revised.`);
        if (row.revision_briefs.length >= row.revisions_included) throw new Refusal('revision_limit_reached');
        const revised = await createWebsiteRepository(client).update(
          row.id,
          { revision_briefs: [...row.revision_briefs, brief.trim()], build_wanted: true, build_claimed_until: null, build_attempts: 0, ...(row.status === 'ready' ? { status: 'building' as const } : {}) },
          now,
        );
        return { created: false, body: await view(client, revised) };
      });
    },

    /** DELETE: before delivery cancelled with the fee back; once live, taken down with hosting stopped. */
    async cancel(owner: WebsiteOwner, buildId: string): Promise<WebsiteView> {
      const now = clock.now();
      return withTransaction(pool, async (client) => {
        const row = await room.lockOwn(client, owner, buildId);
        if (['failed', 'cancelled', 'purged'].includes(row.status)) return view(client, row);
        const delivered = !(row.status === 'building' || row.status === 'ready');
        const cancelled = await createWebsiteRepository(client).update(
          row.id,
          { status: 'cancelled', cancelled_at: now, build_wanted: false, build_claimed_until: null, hosting_renews_on: null, suspend_due_on: null, purge_due_on: null },
          now,
        );
        if (!delivered) await room.refundFee(client, row, 'cancelled before delivery', now);
        log.info({ website_id: row.id, delivered }, delivered ? 'website taken down; hosting stopped' : 'website order cancelled; fee refunded');
        return view(client, cancelled);
      });
    },
  };
}
