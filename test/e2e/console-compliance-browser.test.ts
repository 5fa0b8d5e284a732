/**
 * The compliance record on the console's Call page (issue 23 §6), in a real browser (Debian's
 * chromium via playwright-core) against the whole service in this process: a dialled call whose
 * callee asked not to be called again and objected to the recording shows who answered, the
 * opening played, the opt-out and the objection; a request not dialled yet says it has no record
 * (and asks nothing). Screenshots at 1280 and 375 px into test-results/console-compliance/
 * (git-ignored), axe-core (no serious or critical violation), no sideways scrolling at 375 px and
 * no console error.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { look as lookAt, watchConsoleErrors } from './console-browser.ts';
import { ensureConsoleBuilt } from '../../app/console-build.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';

const OUT = path.join(process.cwd(), 'test-results', 'console-compliance');

let svc: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let account: TestAccount;
let owner: ConsoleClient;
let errors: ReturnType<typeof watchConsoleErrors>;

test.before(async () => {
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(OUT, { recursive: true });
  await ensureConsoleBuilt({ quiet: true });
  const [started, launched] = await Promise.allSettled([startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' }), launchChromium()]);
  if (started.status === 'fulfilled') svc = started.value;
  if (launched.status === 'fulfilled') browser = launched.value;
  for (const r of [started, launched]) if (r.status === 'rejected') throw r.reason;
  account = await makeAccount(svc.url);
  owner = await consoleAs(svc.url, account.id, 'owner');
  await advanceToNext(account, 2, 15);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'America/New_York' });
  context.setDefaultTimeout(10_000);
  const [name, value] = owner.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/console', httpOnly: true, sameSite: 'Strict' }]);
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP refused ${e.effectiveDirective} at ${e.sourceFile}:${e.lineNumber}: ${e.sample}`));
  });
  page = await context.newPage();
  errors = watchConsoleErrors(page);
});

test.afterEach.always('a failed step leaves a screenshot of where it stopped', async (t) => {
  if (!t.passed && page) await page.screenshot({ path: path.join(OUT, `failed-${t.title.slice(0, 30).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
});

test.after.always(async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
  await svc?.stop();
});

const look = (t: ExecutionContext, name: string) => lookAt(t, OUT, name, page, errors);

test.serial('a dialled call: who answered, the opening, the opt-out and the objection to the recording', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  // Last digit 5: the callee asks not to be called again.
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550405', business_name: 'Harbor Dental' });
  await dialUntilFinished(account, account.api, queued.body.id);
  await svc.services.calls.ask(queued.body.id, { type: 'tool_called', name: 'recording_objection', args: {} });

  await page.goto(`${svc.url}/console/calls/${queued.body.id}`);
  await page.locator('#compliance-record dl').waitFor();
  await look(t, 'call-compliance-record');
  const section = await page.locator('#compliance-record').innerText();
  t.regex(section, /Who answered\s+A person/);
  t.regex(section, /Opening played\s+“Hello, this call is on behalf of Bright Dental\. To stop these calls, press 9 or say stop\./);
  t.regex(section, /Opt-out during the call\s+Asked not to be called/);
  t.regex(section, /Objection to the recording\s+Objected Recording stopped; the call went on unrecorded\./);
  t.notRegex(section, /Switchboard/i);
});

test.serial('a request not dialled yet: no record, and nothing asked for', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550410' });
  const asked: string[] = [];
  page.on('request', (r) => r.url().includes('/compliance_record') && asked.push(r.url()));
  await page.goto(`${svc.url}/console/calls/${queued.body.id}`);
  await page.locator('#compliance-record').waitFor();
  await look(t, 'queued-compliance-record');
  t.regex(await page.locator('#compliance-record').innerText(), /No record yet/);
  t.deepEqual(asked, []);
});
