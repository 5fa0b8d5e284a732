import pg from 'pg';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { startTestService, type TestService } from './service.ts';
import { makeAccount, type TestAccount } from './factories.ts';
import { consoleAs, type ConsoleClient } from './console.ts';
import type { Client } from './http.ts';

/** The service with live card payments through the fake Stripe, its webhooks pointed back at the service. */
export async function startWithFakeStripe(env: Record<string, string> = {}): Promise<{ svc: TestService; fake: FakeStripe; db: pg.Pool }> {
  const fake = await startFakeStripe({ webhookRetryMs: 50 });
  const svc = await startTestService({
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_PUBLISHABLE_KEY: fake.publishableKey,
    STRIPE_API_BASE: fake.url,
    ...env,
  });
  fake.setWebhookUrl(`${svc.url}/webhooks/stripe`);
  return { svc, fake, db: new pg.Pool({ connectionString: svc.databaseUrl, max: 2 }) };
}

export const CARD_YEAR = new Date().getUTCFullYear() + 3;
export const card = (number = '4242424242424242') => ({ number, exp_month: 12, exp_year: CARD_YEAR, cvc: '123' });

export type LiveAccount = TestAccount & { liveApi: Client; owner: ConsoleClient };

/** A live account and its owner signed in to the console. */
export async function liveConsoleAccount(url: string): Promise<LiveAccount> {
  const a = (await makeAccount(url, { live: true })) as TestAccount & { liveApi: Client };
  return { ...a, owner: await consoleAs(url, a.id, 'owner') };
}

/** The checkout session id of a created top-up (its checkout_url ends in it, at the fake). */
export const sessionOf = (created: { checkout_url: string }) => new URL(created.checkout_url).pathname.split('/').pop()!;

/** Tops up `amount_cents` by card at the fake's page; answers the created card payment and the session id. */
export async function payCheckout(a: LiveAccount, fake: FakeStripe, amount_cents: number, o: { saveCard?: boolean; number?: string; mode?: 'live' | 'test' } = {}) {
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: o.mode ?? 'live', amount_cents, save_card: o.saveCard ?? false });
  if (created.status !== 201) throw new Error(`top-up: ${created.status} ${created.text}`);
  const session = sessionOf(created.body);
  const paid = await fake.pay(session, card(o.number));
  if (paid.status !== 303) throw new Error(`pay: ${paid.status} ${paid.body}`);
  return { payment: created.body, session, paid };
}

/** A call of `seconds` (20 cents a minute) on the live balance, through the operator's holds. */
export async function liveCall(a: LiveAccount, customerId: string, seconds: number): Promise<void> {
  const reference = `call-${Math.random().toString(36).slice(2)}`;
  const held = await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: customerId, reference });
  if (!held.body.ok) throw new Error(`hold refused: ${held.text}`);
  const ended = await a.admin.post(`/admin/v1/accounts/${a.id}/holds/${reference}/end`, { duration_seconds: seconds });
  if (ended.status !== 200) throw new Error(ended.text);
}

/** Stops what startWithFakeStripe started (any of it may be missing after a failed start). */
export async function stopWithFakeStripe(s: { svc?: TestService; fake?: FakeStripe; db?: pg.Pool }): Promise<void> {
  await s.db?.end();
  await s.svc?.stop();
  await s.fake?.close();
}
