import type { Mode } from '../../runtime/types.ts';
import { createWebsiteRepository } from '../../db/websites.ts';
import { isUuid } from '../../db/customers.ts';
import { normaliseDomain } from './domain-names.ts';
import type { Room } from './room.ts';
import { previewOpen } from './views.ts';

/**
 * What a site's addresses serve (http/pages/sites.ts asks): a site by its slug or a verified
 * domain, a build's unlisted preview, and whether Caddy may get a certificate for a host.
 */
export function createWebsiteServing(room: Room) {
  const { pool, clock } = room.deps;
  const { addresses } = room;

  return {
    /** What a request for a site serves: by slug or by a verified domain (`servedSite` in views decides the answer). */
    async bySlug(slug: string) {
      return createWebsiteRepository(pool).servedBySlug(slug);
    },
    async byDomain(host: string) {
      return createWebsiteRepository(pool).servedByDomain(host);
    },
    /** The preview of build `id` when `token` is its current one and the preview is open (unlisted, never indexed). */
    async preview(id: string, token: string): Promise<{ html: string; mode: Mode } | null> {
      if (!isUuid(id)) return null;
      const row = await createWebsiteRepository(pool).preview(id);
      if (!row?.html || !addresses.previewTokenMatches(id, row.preview_nonce, token) || !previewOpen(row, clock.now())) return null;
      return { html: row.html, mode: row.mode };
    },
    /** Caddy's on-demand TLS asks before it gets a certificate: yes only for verified domains of served sites. */
    async allowsCertificate(host: string): Promise<boolean> {
      const name = normaliseDomain(host);
      if (!name) return false;
      return createWebsiteRepository(pool).isServedDomain(name);
    },
  };
}
