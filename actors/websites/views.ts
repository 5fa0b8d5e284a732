import crypto from 'node:crypto';
import type { Config } from '../../runtime/config.ts';
import type { WebsiteRow } from '../../db/websites.ts';

/** The website build resource (docs/api.md, "Websites"). */
export interface WebsiteView {
  object: 'website_build';
  id: string;
  customer_id: string;
  status: WebsiteRow['status'];
  /** Once a page is built (unlisted, never indexed). */
  preview_url: string | null;
  /** The site's address once live (kept while it counts down and while suspended). */
  url: string | null;
  domain: string | null;
  domain_verified: boolean;
  brief: string | null;
  revisions_included: number;
  revisions_used: number;
  build_fee_cents: number;
  hosting_cents_per_month: number;
  hosting_renews_on: string | null;
  suspend_due_on: string | null;
  purge_due_on: string | null;
  live_at: string | null;
  failure_reason: string | null;
  mode: WebsiteRow['mode'];
  created_at: string;
}

/** Where sites and previews live, from the settings. */
export interface SiteAddresses {
  /** The address of a live site. */
  siteUrl(slug: string): string;
  /** The unlisted preview of a build. */
  previewUrl(id: string): string;
  /** What a customer's domain's CNAME must point at. */
  cnameTarget(slug: string): string;
  previewTokenMatches(id: string, token: string): boolean;
}

/**
 * Sites live at `https://<slug>.<sitesDomain>` when a sites domain is set, else at
 * `<publicUrl>/sites/<slug>/` (a path form that works on localhost). A preview carries a token
 * derived from the build's id (`mac`), so it can be shown again without being stored.
 */
export function siteAddresses(config: Pick<Config, 'publicUrl' | 'sitesDomain'>, mac: (id: string) => string): SiteAddresses {
  const publicHost = () => new URL(config.publicUrl).hostname;
  return {
    siteUrl: (slug) => (config.sitesDomain ? `https://${slug}.${config.sitesDomain}/` : `${config.publicUrl}/sites/${slug}/`),
    previewUrl: (id) => `${config.publicUrl}/sites/preview/${id}/${mac(id)}`,
    cnameTarget: (slug) => (config.sitesDomain ? `${slug}.${config.sitesDomain}` : publicHost()),
    previewTokenMatches: (id, token) => {
      const expected = Buffer.from(mac(id));
      const given = Buffer.from(token);
      return expected.length === given.length && crypto.timingSafeEqual(expected, given);
    },
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function websiteView(row: WebsiteRow, addresses: SiteAddresses): WebsiteView {
  const delivered = row.built_at !== null && !['purged', 'cancelled', 'failed'].includes(row.status);
  const addressed = row.live_at !== null && ['live', 'hosting_due', 'suspended'].includes(row.status);
  return {
    object: 'website_build',
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    preview_url: delivered ? addresses.previewUrl(row.id) : null,
    url: addressed ? addresses.siteUrl(row.slug) : null,
    domain: row.domain,
    domain_verified: row.domain_verified_at !== null,
    brief: row.brief,
    revisions_included: row.revisions_included,
    revisions_used: row.revision_briefs.length,
    build_fee_cents: row.build_fee_cents,
    hosting_cents_per_month: row.hosting_cents_per_month,
    hosting_renews_on: row.hosting_renews_on,
    suspend_due_on: row.suspend_due_on,
    purge_due_on: row.purge_due_on,
    live_at: iso(row.live_at),
    failure_reason: row.failure_reason,
    mode: row.mode,
    created_at: row.created_at.toISOString(),
  };
}
