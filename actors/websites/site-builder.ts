import type { Deps } from '../../runtime/deps.ts';
import { researchSite } from './research.ts';
import { copywriterFor, type Copywriter } from './copywriter.ts';
import { composePage } from './composer.ts';
import { MAX_BRIEF_CHARS, type SiteFacts } from './site-facts.ts';
import type { BuildInput, SiteBuilder } from './room.ts';

/**
 * The page of a build, made from what the service knows: the customer's existing website read
 * through the webhooks' address guard (research.ts), the copy written by the model when
 * configured or the deterministic copywriter otherwise (copywriter.ts), and the composer's page
 * (composer.ts). A revision rewrites the page from the order's brief with each change asked
 * for as an instruction to the copywriter (`changes`), never as the page's words.
 */
export function createSiteBuilder(deps: Pick<Deps, 'config' | 'log'>, opts: { copywriter?: Copywriter } = {}): SiteBuilder {
  const { config, log } = deps;
  const copywriter = opts.copywriter ?? copywriterFor(config);
  return {
    async build(input: BuildInput) {
      const { customer } = input;
      let research: SiteFacts['research'] = null;
      if (customer.website_url) {
        const found = await researchSite(customer.website_url, { allowPrivate: config.allowPrivateWebhooks, locale: input.locale, log } as Parameters<typeof researchSite>[1]);
        if (found.ok) research = found.research;
        else log.info({ customer_id: customer.id, reason: found.reason }, "the customer's website could not be read; the page is built without it");
      }
      const facts: SiteFacts = {
        businessName: customer.name,
        brandName: customer.brand_name,
        country: customer.country,
        locale: input.locale,
        phoneE164: input.phoneE164,
        brief: input.brief?.trim() ? input.brief.slice(0, MAX_BRIEF_CHARS) : null,
        changes: changesOf(input.revisionBriefs),
        research,
        resellerName: input.resellerName,
        mode: customer.mode,
      };
      const copy = await copywriter.write(facts, log);
      if (!copy.ok) return { ok: false as const, reason: copy.reason };
      return { ok: true as const, html: composePage(facts, copy.copy).html };
    },
  };
}

/** Each revision's change, bounded together like a brief: the latest are kept when the whole is too long. */
function changesOf(revisions: string[]): string[] {
  const kept: string[] = [];
  let room = MAX_BRIEF_CHARS;
  for (const change of [...revisions].reverse()) {
    const text = change.trim();
    if (!text) continue;
    if (text.length > room) break;
    kept.unshift(text);
    room -= text.length;
  }
  return kept;
}
