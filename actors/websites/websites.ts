import { createRoom, type WebsitesDeps } from './room.ts';
import { createWebsiteOrders } from './orders.ts';
import { createWebsiteBuilds } from './builds.ts';
import { createWebsitePublishing } from './publishing.ts';
import { createWebsiteHosting } from './hosting.ts';
import { createWebsiteServing } from './serving.ts';

/**
 * Websites (issue 15): a customer's one-page site, ordered, built in the background, reviewed,
 * taken live, hosted monthly, counted down and suspended when hosting is unpaid, and purged. A
 * plain module like numbers, in parts that each have one job: orders.ts (order, read, revise,
 * cancel), builds.ts (the builder's claims and pages), publishing.ts (going live, the customer's
 * domain and its DNS checks), hosting.ts (the monthly hosting, countdown, suspension, purge) and
 * serving.ts (what an address serves), on what room.ts gives them all. Every change locks the
 * build's row (a new one: the customer's) in the transaction that makes it; money moves only
 * through the money writer.
 */

export type { BuildInput, SiteBuilder, CnameCheck, WebsitesDeps, WebsiteOwner } from './room.ts';
export type { DnsRecord } from './publishing.ts';

export type Websites = ReturnType<typeof createWebsites>;

export function createWebsites(deps: WebsitesDeps) {
  const room = createRoom(deps);
  return {
    addresses: room.addresses,
    ...createWebsiteOrders(room),
    ...createWebsiteBuilds(room),
    ...createWebsitePublishing(room),
    ...createWebsiteHosting(room),
    ...createWebsiteServing(room),
  };
}
