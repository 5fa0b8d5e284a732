/**
 * Issue 22, "Done when": a declined automatic top-up shows the activity line and the email. Here
 * the email arrives at a real SMTP server (test/helpers/smtp.ts), sent by the production sender,
 * to the account's billing people (owner, admin, billing) and no one else, once, saying what was
 * not charged and why; the money invariants hold.
 */
import test from 'ava';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import type { TestService } from '../helpers/service.ts';
import { NO_BACKGROUND_WORK } from '../helpers/service.ts';
import { makeCustomer } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { sendOutbox } from '../helpers/outbox.ts';
import { liveCall, liveConsoleAccount, payCheckout, startWithFakeStripe, stopWithFakeStripe } from '../helpers/payments.ts';

let svc: TestService;
let fake: FakeStripe;
let db: pg.Pool;
let smtp: SmtpReceiver;
test.before(async () => {
  smtp = await startSmtpReceiver();
  ({ svc, fake, db } = await startWithFakeStripe({ ...NO_BACKGROUND_WORK, SMTP_URL: smtp.url, SWITCHBOARD_EMAIL_FROM: 'billing@platform.example' }));
});
test.after.always(async () => {
  await stopWithFakeStripe({ svc, fake, db });
  await smtp?.close();
});


test('a declined automatic top-up emails the billing people once: the amount, the card and the reason', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const people = Object.fromEntries(await Promise.all(['admin', 'billing', 'viewer', 'developer'].map(async (role) => [role, (await consoleAs(svc.url, a.id, role)).user.email] as const)));
  await payCheckout(a, fake, 5_000, { saveCard: true });
  await fake.settled();
  await svc.services.payNow();
  const saved = (await db.query(`SELECT payment_method_id FROM saved_cards WHERE account_id = $1 AND mode = 'live'`, [a.id])).rows[0];
  fake.cardBehavesAs(saved.payment_method_id, '4000000000009995'); // insufficient funds from now on
  const set = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 4_990, amount_cents: 2_500 });
  t.is(set.status, 200, set.text);
  const c = await makeCustomer(a.liveApi);
  await sendOutbox(svc, a.id); // the people's invitations
  const before = smtp.messages.length;

  await liveCall(a, c.id, 60); // 20 cents: 4,980, under 4,990
  await svc.services.payNow();
  await svc.services.payNow();
  await sendOutbox(svc, a.id);

  const failed = smtp.messages.slice(before).filter((m) => /automatic top-up/i.test(m.subject));
  const to = failed.flatMap((m) => m.envelope.to.map((x) => x.toLowerCase())).sort();
  const billing = [people.admin!, people.billing!, a.owner.user.email].map((x) => x.toLowerCase()).sort();
  t.true(billing.every((p) => to.includes(p)), `each billing person: ${JSON.stringify(to)}`);
  t.false(to.includes(people.viewer!.toLowerCase()), 'not a viewer');
  t.false(to.includes(people.developer!.toLowerCase()), 'not a developer');
  t.is(to.length, new Set(to).size, 'once each');
  const mail = failed[0]!;
  t.regex(mail.subject, /\$25\.00/);
  t.regex(mail.text ?? '', /4242/, 'names the card by its last four');
  t.regex(mail.text ?? '', /insufficient funds|declined/i, 'says why');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
