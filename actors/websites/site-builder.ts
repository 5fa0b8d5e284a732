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
 * (composer.ts). A revision's brief is the order's brief with each change after it.
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
        brief: briefOf(input),
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

/** The order's brief followed by each revision's change, bounded like a brief. */
function briefOf(input: BuildInput): string | null {
  const parts = [input.brief, ...input.revisionBriefs.map((b) => `Change: ${b}`)].filter((p): p is string => Boolean(p && p.trim()));
  if (parts.length === 0) return null;
  const text = parts.join('\n\n');
  // Revisions are the latest word: keep the end when the whole is too long.
  return text.length <= MAX_BRIEF_CHARS ? text : text.slice(text.length - MAX_BRIEF_CHARS);
}
