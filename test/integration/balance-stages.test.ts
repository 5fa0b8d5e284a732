import test from 'ava';
import { readFileSync } from 'node:fs';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';

/**
 * The low-balance stage of a balance nobody topped up, as GET /v1/balance answers it and as
 * docs/api.md ("Balance and usage") says it (issue 20 §4: the two disagreed for test mode). The
 * stages mirror the 25 %, 10 % and zero warnings (spec: balance.low, "at zero no new call starts").
 */
let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const balanceDocs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').split('## Balance and usage')[1].split('\n## ')[0].replace(/\s+/g, ' ');

test('test mode: available 0 and low_balance ok, and the docs say test mode is always ok', async (t) => {
  const a = await makeAccount(svc.url);
  const b = await a.api.get('/v1/balance');
  t.like(b.body, { mode: 'test', available_cents: 0, low_balance: 'ok' });
  const documented = /\*\*Test\*\* mode[^.]*?its `low_balance` is always `(\w+)`/.exec(balanceDocs);
  t.truthy(documented, "docs/api.md says what test mode's low_balance is");
  t.is(documented?.[1], b.body.low_balance);
});

test('live mode before any top-up: available 0 is the zero stage, as the docs say', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const b = await a.liveApi!.get('/v1/balance');
  t.like(b.body, { mode: 'live', available_cents: 0, low_balance: 'zero' });
  t.regex(balanceDocs, /Live, before any top-up, the stage is `zero` while less than one call's hold is available/);
});
