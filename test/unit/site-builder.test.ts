import test from 'ava';
import { Writable } from 'node:stream';
import { createSiteBuilder } from '../../actors/websites/site-builder.ts';
import { deterministicCopy } from '../../actors/websites/copy.ts';
import type { Copywriter } from '../../actors/websites/copywriter.ts';
import type { SiteFacts } from '../../actors/websites/site-facts.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { Config } from '../../runtime/config.ts';

const log = createLogger('error', new Writable({ write: (_c, _e, done) => done() }));
const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';
const CHANGE = 'Put the opening hours higher up and mention the free parking behind the practice.';

test('a revision rebuilds from the order\'s brief with the change given to the copywriter as an instruction, never as copy', async (t) => {
  const seen: SiteFacts[] = [];
  const copywriter: Copywriter = { name: 'recording', write: async (facts) => (seen.push(facts), deterministicCopy(facts)) };
  const builder = createSiteBuilder({ config: { allowPrivateWebhooks: false } as Config, log }, { copywriter });
  const built = await builder.build({
    customer: { id: 'c1', name: 'Bright Dental', brand_name: null, country: 'GB', website_url: null, mode: 'live' },
    locale: 'en-GB',
    resellerName: null,
    phoneE164: null,
    brief: BRIEF,
    revisionBriefs: [CHANGE],
  });
  t.true(built.ok);
  t.is(seen[0].brief, BRIEF, 'the brief is the order\'s alone');
  t.deepEqual(seen[0].changes, [CHANGE]);
  const html = built.ok ? built.html : '';
  t.false(html.includes('Change:'));
  t.false(html.includes('free parking'), 'the deterministic copywriter cannot follow an instruction, so it never shows it');
  t.true(html.includes('evening hours on Thursdays'));
});
