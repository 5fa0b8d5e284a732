/**
 * Card payments in the reseller console, in a real browser (Debian's chromium via playwright-core)
 * against the whole service in this process (issue 22, "Done when"):
 *
 * - test mode: the owner adds funds on the Billing page (the bonus the amount earns shown before
 *   paying), pays on the simulated card form, is sent to the receipt, and finds the payment in
 *   the card payments list and its `top_up` and `bonus` lines in the ledger;
 * - a declined test card is shown as a decline on that form, and nothing is written;
 * - live mode against the fake Stripe (test/fakes/stripe.ts: the SDK pointed at it by
 *   STRIPE_API_BASE, its webhooks sent to the service's /webhooks/stripe): the owner pays on its
 *   hosted page with "save this card" ticked, comes back to the return page, which settles on the
 *   receipt, and sees the balance, the bonus, the ledger lines, the saved card and the receipt;
 * - automatic top-up turned on with the saved card above the balance: the off-session charge is
 *   made at once and its credit and receipt show; turned off again.
 *
 * Every new page is screenshotted at 1280 and 375 px into test-results/console-payments/
 * (git-ignored), checked with axe-core (no serious or critical violation) and for sideways
 * scrolling at 375 px, and the browser's console must stay free of errors (except the 402 of the
 * decline the step provokes). The steps run in order and share the browser.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type pg from 'pg';
import { launchChromium } from './browser.ts';
import { look as lookAt, settled, until, watchConsoleErrors } from './console-browser.ts';
import { ensureConsoleBuilt } from '../../app/console-build.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { CARD_YEAR, liveConsoleAccount, startWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';
import type { FakeStripe } from '../fakes/stripe.ts';

const OUT = path.join(process.cwd(), 'test-results', 'console-payments');

let svc: TestService;
let stripe: FakeStripe;
let db: pg.Pool;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let account: LiveAccount;
let errors: ReturnType<typeof watchConsoleErrors>;

test.before(async () => {
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(OUT, { recursive: true });
  await ensureConsoleBuilt({ quiet: true });
  const [started, launched] = await Promise.allSettled([startWithFakeStripe(), launchChromium()]);
  if (started.status === 'fulfilled') ({ svc, fake: stripe, db } = started.value);
  if (launched.status === 'fulfilled') browser = launched.value;
  for (const r of [started, launched]) if (r.status === 'rejected') throw r.reason;
  // A live account (verified, agreement signed, gone live) and its owner signed in to the console.
  account = await liveConsoleAccount(svc.url);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'America/New_York' });
  context.setDefaultTimeout(10_000);
  const [name, value] = account.owner.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/console', httpOnly: true, sameSite: 'Strict' }]);
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP refused ${e.effectiveDirective} at ${e.sourceFile}:${e.lineNumber}: ${e.sample}`));
  });
  page = await context.newPage();
  errors = watchConsoleErrors(page);
});

let step = 0;
test.afterEach.always('a failed step leaves a screenshot of where it stopped', async (t) => {
  step += 1;
  if (!t.passed && page) await page.screenshot({ path: path.join(OUT, `failed-step-${String(step).padStart(2, '0')}.png`), fullPage: true }).catch(() => {});
});

test.after.always('close the browser, the fake Stripe and the service', async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
  await db?.end().catch(() => {});
  await svc?.stop();
  await stripe?.close().catch(() => {});
});

const url = (p: string) => `${svc.url}/console${p}`;
const look = (t: ExecutionContext, name: string, expected: RegExp[] = []) => lookAt(t, OUT, name, page, errors, expected);
const main = () => page.locator('main').innerText();

/** A console JSON route read with the owner's session. */
async function consoleGet<T = any>(p: string): Promise<T> {
  const r = await account.owner.get<T>(`/console/api${p}`);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.text}`);
  return r.body;
}

/** The Billing page in `mode` (its address switches the console's mode), settled. */
async function openBilling(mode: 'test' | 'live'): Promise<void> {
  await page.goto(url(`/billing?mode=${mode}`));
  await page.locator('#add-funds').waitFor();
  await settled(page);
  await page.locator('#add-funds form, #add-funds .notice').first().waitFor();
}

/** The mode's `top_up` and `bonus` ledger lines as [type, cents], sorted. */
async function topUpLines(mode: 'test' | 'live'): Promise<[string, number][]> {
  const lines = (await consoleGet(`/billing/ledger?mode=${mode}`)).data as { type: string; amount_cents: number }[];
  return lines
    .filter((l) => l.type === 'top_up' || l.type === 'bonus')
    .map((l): [string, number] => [l.type, l.amount_cents])
    .sort();
}

/** On the fake Stripe's hosted page: pays with `number` and waits to be back on the console's return page. */
async function payAtProcessor(t: ExecutionContext, number: string): Promise<void> {
  await page.waitForURL((u) => u.origin === stripe.url);
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month').fill('12');
  await page.getByLabel('Expiry year').fill(String(CARD_YEAR));
  await page.getByLabel('CVC').fill('123');
  // The processor's page is not the console: its missing favicon is its own business.
  t.deepEqual(errors.take([/status of 404/, /^\(404 GET \/favicon\.ico\)$/]), [], 'nothing else failed on the way to the processor');
  await page.getByRole('button', { name: /^Pay/ }).click();
  await page.waitForURL((u) => u.origin === svc.url && u.pathname.startsWith('/console/billing/top-ups/'));
}

/** Fills the amount and presses the pay button; resolves when the browser has left the console for the payment page. */
async function startTopUp(dollars: string, opts: { saveCard?: boolean } = {}): Promise<void> {
  await page.getByLabel('Amount (USD)').fill(dollars);
  if (opts.saveCard) await page.getByLabel('Save this card for automatic top-ups').check();
  await page.getByRole('button', { name: new RegExp(`^Pay \\$${dollars.replace('.', '\\.')}`) }).click();
}

test.serial('test mode: Add funds shows the bonus the amount earns, then the simulated card form', async (t) => {
  await openBilling('test');
  const addFunds = page.locator('#add-funds');
  t.regex(await addFunds.innerText(), /top-ups here are simulated and do not move money/);
  await page.getByLabel('Amount (USD)').fill('10');
  await page.getByLabel('Amount (USD)').blur();
  t.regex(await addFunds.innerText(), /The least you can add is \$25\.00/, 'under the minimum is said before paying');
  await page.getByLabel('Amount (USD)').fill('600');
  const summary = await page.getByLabel('What this top-up adds').innerText();
  t.regex(summary, /You pay\s+\$600\.00/);
  t.regex(summary, /Bonus \(3 %\)\s+\$18\.00/);
  t.regex(summary, /\$618\.00/);
  await look(t, 'billing-test');
  await startTopUp('600.00');
  await page.waitForURL((u) => u.pathname.startsWith('/console/checkout/'));
  await page.getByRole('heading', { level: 1, name: 'Test checkout' }).waitFor();
  const text = await main();
  t.regex(text, /This is a test payment: no card is charged/);
  t.regex(text, /\$600\.00/);
  t.regex(text, /4242 4242 4242 4242/, 'the test cards are listed');
  await look(t, 'checkout');
});

test.serial('test mode: a declined card is shown as a decline, and nothing is written', async (t) => {
  await page.getByLabel('Card number').fill('4000 0000 0000 0002');
  await page.getByLabel('Expiry (MM/YY)').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: 'Pay $600.00' }).click();
  const alert = page.locator('.decline[role=alert]');
  await alert.waitFor();
  t.regex(await alert.innerText(), /Card declined[\s\S]*declined/);
  t.regex(new URL(page.url()).pathname, /^\/console\/checkout\//, 'still on the card form');
  await look(t, 'checkout-declined', [/status of 402/]);
  t.deepEqual(await topUpLines('test'), [], 'no top-up line');
});

test.serial('test mode: a test card pays; the receipt, the card payments list and the ledger lines show it', async (t) => {
  await page.getByLabel('Card number').fill('4242 4242 4242 4242');
  await page.getByRole('button', { name: 'Pay $600.00' }).click();
  await page.waitForURL((u) => u.pathname.startsWith('/console/billing/top-ups/'));
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor({ timeout: 15_000 });
  const receipt = await main();
  t.regex(receipt, /Amount paid\s+\$600\.00/);
  t.regex(receipt, /Bonus credit\s+\$18\.00/);
  t.regex(receipt, /Visa ending in 4242/);
  t.regex(receipt, /this payment was simulated/i);
  await look(t, 'receipt-test');
  // Reloading the return page credits nothing more.
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor();

  await page.getByRole('link', { name: 'Back to billing' }).click();
  await page.locator('#card-payments table').waitFor();
  await settled(page);
  const list = await page.locator('#card-payments').innerText();
  t.regex(list, /\$600\.00[\s\S]*\$18\.00[\s\S]*Visa ending in 4242[\s\S]*Paid/);
  const ledger = await page.locator('#ledger').innerText();
  t.regex(ledger, /Top up[\s\S]*\$600\.00/);
  t.regex(ledger, /Bonus[\s\S]*\$18\.00/);
  t.deepEqual(
    await topUpLines('test'),
    [
      ['bonus', 1800],
      ['top_up', 60000],
    ],
    'one top-up line and its bonus, however often the return page was read',
  );
  await look(t, 'billing-test-after');
});

let livePaymentId = '';

test.serial('live mode: pays on the processor’s hosted page with the card saved; the return page settles on the receipt', async (t) => {
  await openBilling('live');
  t.notRegex(await page.locator('#add-funds').innerText(), /simulated/, 'live mode moves money');
  t.regex(await page.locator('#auto-top-up').innerText(), /needs a saved card/);
  await look(t, 'billing-live');
  await startTopUp('600.00', { saveCard: true });
  await page.waitForURL((u) => u.origin === stripe.url);
  t.regex(await page.locator('body').innerText(), /\$600\.00/);
  await payAtProcessor(t, '4242424242424242');
  livePaymentId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  t.is(new URL(page.url()).searchParams.get('mode'), 'live');
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor({ timeout: 20_000 });
  const receipt = await main();
  t.regex(receipt, /Amount paid\s+\$600\.00/);
  t.regex(receipt, /Bonus credit\s+\$18\.00/);
  t.regex(receipt, /Credit added\s+\$618\.00/);
  t.regex(receipt, /Visa ending in 4242/);
  const processorReceipt = page.getByRole('link', { name: 'The card processor’s receipt' });
  t.true((await processorReceipt.getAttribute('href'))!.startsWith(`${stripe.url}/receipts/`), 'the processor’s receipt link');
  await look(t, 'receipt-live');
  await stripe.settled();
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor();
  const payment = await consoleGet(`/billing/top_ups/${livePaymentId}?mode=live`);
  t.is(payment.status, 'succeeded');
  t.is(payment.bonus_cents, 1800);
});

test.serial('live mode: the balance, the bonus, the ledger lines, the saved card and the receipt in the list', async (t) => {
  await page.getByRole('link', { name: 'Back to billing' }).click();
  await page.locator('#card-payments table').waitFor();
  await settled(page);
  const balance = await page.locator('#balance').innerText();
  t.regex(balance, /Available now\s+\$618\.00/);
  t.regex(balance, /Paid\s+\$600\.00/);
  t.regex(balance, /Bonus\s+\$18\.00/);
  t.regex(await page.locator('#ledger').innerText(), /Top up[\s\S]*\$600\.00/);
  t.regex(await page.locator('#saved-card').innerText(), new RegExp(`Visa ending in 4242[\\s\\S]*12/${CARD_YEAR}`));
  t.regex(await page.locator('#card-payments').innerText(), /\$600\.00[\s\S]*\$18\.00[\s\S]*Visa ending in 4242[\s\S]*Paid/);
  t.deepEqual(
    await topUpLines('live'),
    [
      ['bonus', 1800],
      ['top_up', 60000],
    ],
    'credited once: by the webhook or the return page, whichever came first',
  );
  await look(t, 'billing-live-after');
  await page.locator('#card-payments').getByRole('link').first().click();
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor();
  t.is(decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!), livePaymentId, 'the list links to the receipt');
  await page.emulateMedia({ media: 'print' });
  t.is(await page.locator('.topbar').isVisible(), false, 'printed without the console’s frame');
  t.is(await page.getByRole('button', { name: 'Print receipt' }).isVisible(), false);
  await page.screenshot({ path: path.join(OUT, 'receipt-print.png'), fullPage: true });
  await page.emulateMedia({ media: 'screen' });
});

test.serial('automatic top-up with the saved card: switched on with the balance under its threshold, it charges at once', async (t) => {
  await openBilling('live');
  const auto = page.locator('#auto-top-up');
  await auto.getByLabel('When the balance falls under (USD)').fill('620');
  await auto.getByLabel('Add (USD)').fill('25');
  await auto.getByRole('button', { name: 'Turn on automatic top-up' }).click();
  await auto.getByText('Automatic top-up is on.').waitFor();
  t.regex(await auto.innerText(), /When your available balance falls under \$620\.00, \$25\.00 is added with Visa ending in 4242/);
  await until(
    'the automatic charge is credited',
    async () => {
      await svc.services.payNow();
      const list = (await consoleGet('/billing/top_ups?mode=live')).data as { kind: string; status: string }[];
      return list.some((p) => p.kind === 'automatic' && p.status === 'succeeded');
    },
    30_000,
  );
  await page.reload();
  await page.locator('#card-payments table').waitFor();
  await settled(page);
  t.regex(await page.locator('#balance').innerText(), /Available now\s+\$643\.00/, '618 + 25');
  t.regex(await page.locator('#card-payments').innerText(), /\$25\.00[\s\S]*Visa ending in 4242[\s\S]*Paid/);
  await look(t, 'billing-auto-top-up-on');
  await auto.getByRole('button', { name: 'Turn off' }).click();
  await auto.getByText('Automatic top-up is off.').waitFor();
  const setup = await consoleGet('/billing/payments?mode=live');
  t.is(setup.auto_top_up, null);
});

test.serial('the saved card removed, a card that needs authentication saved instead: its automatic charge fails and the page says why and when it tries again', async (t) => {
  await openBilling('live');
  await page.locator('#saved-card').getByRole('button', { name: 'Remove card' }).click();
  const dialog = page.getByRole('dialog');
  t.regex(await dialog.innerText(), /Visa ending in 4242/);
  await look(t, 'saved-card-remove-dialog');
  await dialog.getByRole('button', { name: 'Remove card' }).click();
  await page.locator('#saved-card').getByText('No saved card').waitFor();
  t.regex(await page.locator('#auto-top-up').innerText(), /needs a saved card/);
  t.is((await consoleGet('/billing/payments?mode=live')).saved_card, null);

  // 4000 0025 0000 3155: paid on the page it authenticates and succeeds; charged off-session it cannot.
  await startTopUp('25.00', { saveCard: true });
  await payAtProcessor(t, '4000002500003155');
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor({ timeout: 20_000 });
  await stripe.settled();

  await openBilling('live');
  t.regex(await page.locator('#saved-card').innerText(), /Visa ending in 3155/);
  const auto = page.locator('#auto-top-up');
  await auto.getByLabel('When the balance falls under (USD)').fill('1000');
  await auto.getByLabel('Add (USD)').fill('25');
  await auto.getByRole('button', { name: 'Turn on automatic top-up' }).click();
  await auto.getByText('Automatic top-up is on.').waitFor();
  await until(
    'the automatic charge fails',
    async () => {
      await svc.services.payNow();
      return (await consoleGet('/billing/payments?mode=live')).auto_top_up?.status === 'failing';
    },
    30_000,
  );
  await page.reload();
  await settled(page);
  const text = await auto.innerText();
  t.regex(text, /Failing/);
  t.regex(text, /The last automatic top-up failed/);
  t.regex(text, /authentication/i, 'the processor’s reason');
  t.regex(text, /It will try again after /, 'and when');
  t.regex(await page.locator('#card-payments').innerText(), /\$25\.00[\s\S]*Visa ending in 3155[\s\S]*Failed/);
  t.regex(await page.locator('#activity').innerText(), /Automatic top-up failed[\s\S]*authenticate/);
  await look(t, 'billing-auto-top-up-failing');
  // Its receipt page says why it failed.
  const failed = ((await consoleGet('/billing/top_ups?mode=live')).data as { id: string; kind: string; status: string }[]).find((p) => p.kind === 'automatic' && p.status === 'failed')!;
  await page.goto(url(`/billing/top-ups/${failed.id}?mode=live`));
  await page.getByRole('heading', { level: 1, name: 'Payment failed' }).waitFor();
  t.regex(await main(), /authentication/i);
  await look(t, 'payment-failed');
});

test.serial('a refund the operator makes shows on the receipt and in the card payments list', async (t) => {
  const refund = await account.admin.post(`/admin/v1/accounts/${account.id}/card_payments/${livePaymentId}/refunds`, { amount_cents: 10_000 });
  t.is(refund.status, 201, refund.text);
  await page.goto(url(`/billing/top-ups/${livePaymentId}?mode=live`));
  await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor();
  t.regex(await main(), /Refunded\s+\$100\.00/);
  await openBilling('live');
  t.regex(await page.locator('#card-payments').innerText(), /\$600\.00[\s\S]*\$18\.00[\s\S]*Visa ending in 4242[\s\S]*Paid\s+\$100\.00/);
  t.regex(await page.locator('#ledger').innerText(), /Top up refund[\s\S]*-\$100\.00/);
  await look(t, 'billing-refunded');
});

test('live mode without the processor’s settings: the page says card payments are not configured and who adds funds', async (t) => {
  const bare = await startTestService();
  t.teardown(() => bare.stop());
  const other = await liveConsoleAccount(bare.url);
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  t.teardown(() => ctx.close());
  const [name, value] = other.owner.cookie.split('=') as [string, string];
  await ctx.addCookies([{ name, value, domain: '127.0.0.1', path: '/console', httpOnly: true, sameSite: 'Strict' }]);
  const p = await ctx.newPage();
  const pErrors = watchConsoleErrors(p);
  await p.goto(`${bare.url}/console/billing?mode=live`);
  await p.getByText('Card payments are not configured').waitFor();
  const text = await p.locator('#add-funds').innerText();
  t.regex(text, /operator/);
  t.is(await p.getByRole('button', { name: /^Pay/ }).count(), 0, 'nothing to pay with');
  await lookAt(t, OUT, 'billing-not-configured', p, pErrors);
});
