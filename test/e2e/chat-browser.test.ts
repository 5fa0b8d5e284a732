/**
 * The chat page in a real browser (Debian's chromium driven by playwright-core) against the real
 * `switchboard start` on its own embedded database, with the assistant's model played by the
 * chat-completions fake: a reseller mints a session, a person opens /chat#token=…, sends
 * messages and sees the replies, in the reseller's brand, with no supplier named anywhere.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { cleanUpEverything, freePort, makeTempRoot, request, startSwitchboard, type Instance } from './process-helpers.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';

const ADMIN_TOKEN = 'sbc_e2e_chat_browser_console_token_YOOkzqaVAM53';
const BRAND = { display_name: 'Northwind Calls', primary_color: '#123456', accent_color: '#0f766e', logo_url: 'https://example.com/logo.png' };
/** Names the white-label page must never show. */
const HIDDEN_NAMES = /switchboard|twilio|openai|chatgpt|gpt-|anthropic|claude|gemini|aws|azure|vercel|heroku|cloudflare/i;
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

let service: Instance;
let browser: Browser;
let fake: FakeOpenAIChat;
let key = '';
let customer = '';

test.before(async () => {
  fake = await startFakeOpenAIChat();
  const port = await freePort();
  const dataDir = path.join(await makeTempRoot('switchboard-e2e-chat-'), 'data');
  const [started, launched] = await Promise.allSettled([
    startSwitchboard({
      dataDir,
      port,
      env: {
        SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
        SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}`,
        OPENAI_API_KEY: fake.apiKey,
        OPENAI_BASE_URL: fake.url,
        OPENAI_CHAT_MODEL: 'fake-chat-1',
      },
    }),
    launchChromium(),
  ]);
  if (launched.status === 'fulfilled') browser = launched.value;
  if (started.status === 'fulfilled') service = started.value;
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;

  const account = await request(service.url, 'POST', '/admin/v1/accounts', { token: ADMIN_TOKEN, body: { name: 'Northwind Reselling LLC', country: 'US' } });
  if (account.status !== 201) throw new Error(`create account: ${account.status} ${account.text}`);
  const created = await request(service.url, 'POST', `/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: { mode: 'test', label: 'chat-e2e' } });
  key = created.body.secret;
  const brand = await request(service.url, 'PATCH', '/v1/brand', { token: key, body: BRAND });
  if (brand.status !== 200) throw new Error(`brand: ${brand.status} ${brand.text}`);
  const c = await request(service.url, 'POST', '/v1/customers', { token: key, body: { name: 'Bright Dental', external_ref: 'bright-1' } });
  customer = c.body.id;
});

test.after.always('close the browser, the fake and the service', async () => {
  await browser?.close().catch(() => {});
  if (service?.isRunning()) await service.stop('SIGTERM', 10_000).catch(() => {});
  await fake?.close();
  await cleanUpEverything();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route('https://example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PIXEL }));
  return page;
}

async function mintToken(body: Record<string, unknown> = { end_user_ref: 'rep-1', display_name: 'Dana' }): Promise<string> {
  const res = await request(service.url, 'POST', `/v1/customers/${customer}/sessions`, { token: key, body });
  if (res.status !== 201) throw new Error(`mint: ${res.status} ${res.text}`);
  return res.body.token;
}

test.serial('a person opens the chat link, sends messages and sees the replies in the reseller brand', async (t) => {
  const token = await mintToken();
  const page = await newPage();
  t.teardown(() => page.context().close());
  const seen: string[] = [];
  page.on('request', (r) => seen.push(r.url()));
  const browserErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && browserErrors.push(m.text()));

  const opened = await page.goto(`${service.url}/chat#token=${token}`);
  t.is(opened?.status(), 200);
  await page.locator('#message:not([disabled])').waitFor({ timeout: 10_000 });
  t.is(new URL(page.url()).hash, '', 'the token leaves the address bar');
  t.false(seen.some((u) => u.includes(token)), 'the token is never in a URL the browser requests');

  // the reseller's brand, set by the page from GET /v1/chat/session
  t.is((await page.locator('header h1').innerText()).trim(), 'Northwind Calls');
  t.regex(await page.title(), /Northwind Calls/);
  t.is(await page.locator('header img.logo').getAttribute('src'), BRAND.logo_url);
  t.is(await page.locator('header').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor as string), 'rgb(18, 52, 86)');
  t.regex(await page.locator('#greeting').innerText(), /Hi Dana, your sales coach from Northwind Calls/);

  fake.script({ reply: 'Hello Dana! I run on OpenAI GPT-4o through Twilio. Your calls are a good start.' });
  await page.locator('#message').fill('Who are you and how are we doing?');
  await page.locator('#send').click();
  const first = page.locator('#thread li.assistant').nth(0);
  await first.waitFor({ timeout: 10_000 });
  t.is((await first.innerText()).trim(), 'Hello Dana! I run on Northwind Calls. Your calls are a good start.');
  t.is((await page.locator('#thread li.user').nth(0).innerText()).trim(), 'Who are you and how are we doing?');
  t.is(await page.locator('#message').inputValue(), '', 'the box is cleared after an answer');

  // the second message carries the thread, which only the browser kept
  fake.script({ reply: 'Try calling earlier in the day.' });
  await page.locator('#message').fill('Any tip?');
  await page.locator('#send').click();
  await page.locator('#thread li.assistant').nth(1).waitFor({ timeout: 10_000 });
  t.is((await page.locator('#thread li.assistant').nth(1).innerText()).trim(), 'Try calling earlier in the day.');
  const sent = fake.requests.at(-1)!.body.messages.slice(1);
  t.deepEqual(sent, [
    { role: 'user', content: 'Who are you and how are we doing?' },
    { role: 'assistant', content: 'Hello Dana! I run on Northwind Calls. Your calls are a good start.' },
    { role: 'user', content: 'Any tip?' },
  ]);
  t.regex(fake.requests.at(-1)!.body.messages[0].content, /FACTS for Bright Dental/);

  // nothing on the page names the service or a supplier
  t.notRegex(await page.locator('body').innerText(), HIDDEN_NAMES);
  t.notRegex(await page.content(), HIDDEN_NAMES);
  t.notRegex(await page.title(), HIDDEN_NAMES);
  t.notRegex(JSON.stringify(await opened!.allHeaders()), HIDDEN_NAMES);
  t.deepEqual(browserErrors, [], 'no CSP violation or script error');

  const sessions = await request(service.url, 'GET', `/v1/customers/${customer}/sessions`, { token: key });
  t.is(sessions.body.data[0].messages_sent, 2);

  // a reload keeps the thread (in this tab only) without the token in the URL
  await page.reload();
  await page.locator('#message:not([disabled])').waitFor({ timeout: 10_000 });
  t.is(await page.locator('#thread li').count(), 4);
});

test.serial('an ended session or a page without a token says so, in the brand where it is known', async (t) => {
  const token = await mintToken({ end_user_ref: 'rep-2' });
  const del = await request(service.url, 'DELETE', `/v1/customers/${customer}/sessions?end_user_ref=rep-2`, { token: key });
  t.is(del.body.revoked, 1);
  const page = await newPage();
  t.teardown(() => page.context().close());
  await page.goto(`${service.url}/chat#token=${token}`);
  await page.locator('#status.error').waitFor({ timeout: 10_000 });
  t.regex(await page.locator('#status').innerText(), /This chat has ended/);
  t.true(await page.locator('#message').isDisabled());

  const bare = await newPage();
  t.teardown(() => bare.context().close());
  await bare.goto(`${service.url}/chat`);
  await bare.locator('#status.error').waitFor({ timeout: 10_000 });
  t.regex(await bare.locator('#status').innerText(), /needs the chat link/);
  t.notRegex(await bare.content(), HIDDEN_NAMES);
});

test.serial('a failed answer keeps the message to retry and counts nothing', async (t) => {
  const token = await mintToken({ end_user_ref: 'rep-3' });
  const page = await newPage();
  t.teardown(() => page.context().close());
  await page.goto(`${service.url}/chat#token=${token}`);
  await page.locator('#message:not([disabled])').waitFor({ timeout: 10_000 });
  fake.script({ status: 500 }, { status: 500 });
  await page.locator('#message').fill('Are you there?');
  await page.locator('#send').click();
  await page.locator('#status.error').waitFor({ timeout: 15_000 });
  t.regex(await page.locator('#status').innerText(), /could not answer just now/);
  t.is(await page.locator('#message').inputValue(), 'Are you there?');
  t.is(await page.locator('#thread li').count(), 0);
  await page.locator('#send').click();
  await page.locator('#thread li.assistant').waitFor({ timeout: 10_000 });
  const sessions = await request(service.url, 'GET', `/v1/customers/${customer}/sessions`, { token: key });
  t.is(sessions.body.data.find((s: any) => s.end_user_ref === 'rep-3').messages_sent, 1);
});

test.serial("a French customer's chat page speaks French, lang=fr, with the reseller's and the person's names as given", async (t) => {
  const fr = await request(service.url, 'POST', '/v1/customers', { token: key, body: { name: 'Boulangerie Éclair', country: 'FR', external_ref: 'eclair-1' } });
  t.is(fr.status, 201, fr.text);
  const minted = await request(service.url, 'POST', `/v1/customers/${fr.body.id}/sessions`, { token: key, body: { end_user_ref: 'rep-fr', display_name: 'Chloé' } });
  t.is(minted.status, 201, minted.text);
  const page = await newPage();
  t.teardown(() => page.context().close());
  await page.goto(`${service.url}/chat#token=${minted.body.token}`);
  await page.locator('#message:not([disabled])').waitFor({ timeout: 10_000 });
  t.is(await page.evaluate(() => (globalThis as any).document.documentElement.lang as string), 'fr');
  t.is((await page.locator('#greeting').innerText()).trim(), 'Bonjour Chloé, votre coach commercial de Northwind Calls');
  t.regex(await page.locator('#intro').innerText(), /résultats d’appel de Boulangerie Éclair des 30 derniers jours/);
  t.is((await page.locator('label[for=message]').innerText()).trim(), 'Votre message');
  t.is((await page.locator('#send').innerText()).trim(), 'Envoyer');
  t.regex(await page.title(), /^Coach commercial · Northwind Calls$/);
  await page.locator('#message').fill('   ');
  await page.locator('#ask').evaluate((f) => (f as any).requestSubmit());
  t.is((await page.locator('#status').innerText()).trim(), 'Écrivez d’abord un message.');
});
