/**
 * Issue 22, "Done when": the emails the facts ask for (email-wiring.test.ts checks the outbox rows)
 * arrive at a real SMTP server run by the test (test/helpers/smtp.ts): the low-balance stages once
 * each, to the account's billing people only; an invitation and a password reset with a link that
 * works; an onboarding link on the reseller's behalf, in its brand, Reply-To its support address,
 * naming neither the service nor a supplier. The money invariants hold after each.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from '../helpers/smtp.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { call, type Client } from '../helpers/http.ts';
import { consoleAs, CONSOLE_PASSWORD, sessionCookieOf } from '../helpers/console.ts';
import { outboxEmails, sendOutbox } from '../helpers/outbox.ts';
import { end, hold, spend, topUp } from '../helpers/live-money.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';
import { HIDDEN_NAMES } from '../helpers/site-facts.ts';

const PLATFORM = 'Acme Voice';
let svc: TestService;
let smtp: SmtpReceiver;
test.before(async () => {
  smtp = await startSmtpReceiver();
  svc = await startTestService({ SMTP_URL: smtp.url, SWITCHBOARD_EMAIL_FROM: 'mail@platform.example', SWITCHBOARD_PLATFORM_NAME: PLATFORM });
});
test.after.always(async () => {
  await svc?.stop();
  await smtp?.close();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

/** Every message that reached `address` (envelope recipient), in arrival order. */
const mailTo = (address: string): ReceivedMail[] => smtp.messages.filter((m) => m.envelope.to.map((a) => a.toLowerCase()).includes(address.toLowerCase()));


/** The first URL in a message's text that contains `path`. */
function linkIn(mail: ReceivedMail, path: string): string {
  const url = (mail.text ?? '').match(/https?:\/\/[^\s<>"]+/g)?.find((u) => u.includes(path));
  if (!url) throw new Error(`no ${path} link in: ${mail.text}`);
  return url;
}

type Live = TestAccount & { liveApi: Client };
test.serial('low balance: each stage (25 %, 10 %, zero) arrives once, to the billing people only (owner, admin, billing; not a viewer or a developer)', async (t) => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  const people = Object.fromEntries(await Promise.all(['owner', 'admin', 'billing', 'viewer', 'developer'].map(async (role) => [role, (await consoleAs(svc.url, a.id, role)).user.email] as const)));
  const billing = [people.owner!, people.admin!, people.billing!];
  const c = await makeCustomer(a.liveApi);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 10 });
  await topUp(a, 10_000);
  await sendOutbox(svc, a.id); // the invitations of the people, sent to them
  const seen = () => billing.map((p) => mailTo(p).filter((m) => !/invit/i.test(m.subject)).length);

  await spend(a, c.id, 7_600); // 2,400 of 10,000: under 25 %
  await sendOutbox(svc, a.id);
  t.deepEqual(seen(), [1, 1, 1], 'below 25 %: one email to each billing person');

  await spend(a, c.id, 1_500); // 900: under 10 %
  await sendOutbox(svc, a.id);
  t.deepEqual(seen(), [2, 2, 2], 'below 10 %: one more');

  // Two calls hold 800 of the 900: no third call can start.
  await hold(a, c.id, 'arrival-zero-1');
  await hold(a, c.id, 'arrival-zero-2');
  await sendOutbox(svc, a.id);
  t.deepEqual(seen(), [3, 3, 3], 'zero: one more');
  await end(a, 'arrival-zero-1', 0);
  await end(a, 'arrival-zero-2', 0);

  // More rounds of the sender send nothing again.
  for (let i = 0; i < 3; i++) await svc.services.mailNow();
  await new Promise((r) => setTimeout(r, 200));
  t.deepEqual(seen(), [3, 3, 3], 'once per stage, however often the sender runs');
  for (const p of billing) {
    const lows = mailTo(p).filter((m) => !/invit/i.test(m.subject));
    t.is(new Set(lows.map((m) => m.messageId)).size, 3, 'three different messages');
    t.is(new Set(lows.map((m) => m.subject)).size, 3, 'each says its own stage');
    for (const m of lows) t.true(m.partTypes.includes('text/plain') && m.partTypes.includes('text/html'), 'text and HTML');
  }
  for (const role of ['viewer', 'developer']) {
    t.deepEqual(mailTo(people[role]!).filter((m) => !/invit/i.test(m.subject)), [], `nothing about money to the ${role}`);
  }
  const rows = await outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'balance_low' });
  t.deepEqual(rows.map((r) => [r.data.low_balance, r.status]), [['below_25_percent', 'sent'], ['below_10_percent', 'sent'], ['zero', 'sent']]);
  for (const r of rows) t.deepEqual([...r.recipients!].sort(), [...billing].sort());
});

test.serial('an invitation arrives with a link that lets the invited person in', async (t) => {
  const a = await makeAccount(svc.url, { name: 'Northwind Agency' });
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const address = `newbie-${a.id.slice(0, 8)}@agency.example`;
  const invited = await owner.post('/console/api/team/invitations', { email: address, role: 'developer' });
  t.is(invited.status, 201, invited.text);
  await sendOutbox(svc, a.id);
  const mails = mailTo(address);
  t.is(mails.length, 1);
  t.regex(mails[0]!.text ?? '', /Northwind Agency/);
  const link = linkIn(mails[0]!, '/console/accept');
  t.is(link, invited.body.url, 'the link the inviter was shown');
  const token = new URL(link).searchParams.get('token')!;
  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'New Person', password: CONSOLE_PASSWORD } });
  t.is(accepted.status, 200, accepted.text);
  t.like(accepted.body.user, { email: address, role: 'developer' });
  t.truthy(sessionCookieOf(accepted));
});

test.serial('a password reset arrives with a link that sets the new password', async (t) => {
  const a = await makeAccount(svc.url);
  const person = await consoleAs(svc.url, a.id, 'billing');
  await sendOutbox(svc, a.id);
  const asked = await call(svc.url, 'POST', '/console/api/password_resets', { body: { email: person.user.email } });
  t.is(asked.status, 202);
  let mails: ReceivedMail[] = [];
  for (let i = 0; i < 100 && mails.length === 0; i++) {
    await sendOutbox(svc, a.id);
    mails = mailTo(person.user.email).filter((m) => m.text?.includes('/console/reset'));
    if (mails.length === 0) await new Promise((r) => setTimeout(r, 25));
  }
  t.is(mails.length, 1);
  const token = new URL(linkIn(mails[0]!, '/console/reset')).searchParams.get('token')!;
  const done = await call(svc.url, 'POST', '/console/api/password_resets/complete', { body: { token, password: 'a new passphrase from the email' } });
  t.is(done.status, 200, done.text);
  const signIn = await call(svc.url, 'POST', '/console/api/sign_in', { body: { email: person.user.email, password: 'a new passphrase from the email' } });
  t.is(signIn.status, 200, signIn.text);
});

test.serial("an onboarding link arrives on the reseller's behalf: its brand, Reply-To its support address, the customer's language, no word of the service; the link opens the page", async (t) => {
  // Live: a test customer's email goes only to the account's own people (email-review.test.ts).
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  const brand = await a.api.patch('/v1/brand', {
    display_name: 'Harbourline Calls',
    email_from_name: 'Harbourline Calls Team',
    support_email: 'help@harbourline.example',
    primary_color: '#123456',
  });
  t.is(brand.status, 200, brand.text);
  const c = await makeCustomer(a.liveApi, { name: 'Boulangerie Martin', country: 'FR', timezone: 'Europe/Paris' });
  const minted = await a.liveApi.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'patron@boulangerie.example' });
  t.is(minted.status, 201, minted.text);
  t.is(minted.body.emailed_to, 'patron@boulangerie.example');
  await sendOutbox(svc, a.id);
  const mails = mailTo('patron@boulangerie.example');
  t.is(mails.length, 1);
  const mail = mails[0]!;
  t.regex(mail.header('from') ?? '', /^"?Harbourline Calls Team"? <mail@platform\.example>$/);
  t.regex(mail.header('reply-to') ?? '', /^(?:"?Harbourline Calls Team"? <help@harbourline\.example>|help@harbourline\.example)$/);
  t.regex(mail.text ?? '', /Boulangerie Martin/);
  t.regex(mail.html ?? '', /<html[^>]* lang="fr"/, "in the customer's calling language (France's: French)");
  t.regex(mail.text ?? '', /conditions d’appel/i, 'the words are French');
  t.regex(mail.text ?? '', /help@harbourline\.example/, 'the support address is given');
  const everything = [mail.headerLines.join('\n'), mail.subject, mail.text, mail.html].join('\n');
  t.notRegex(everything, HIDDEN_NAMES, "never names the service or a supplier (the pages' list)");
  t.false(everything.includes(PLATFORM), "never names the platform's own name");
  t.false(namesSupplier(`${mail.subject}\n${mail.text}\n${mail.html}`), 'never names a supplier');
  const link = linkIn(mail, '/onboarding/ob_');
  t.is(link, minted.body.url);
  const page = await call(svc.url, 'GET', new URL(link).pathname);
  t.is(page.status, 200);
  t.regex(page.text, /Harbourline Calls/);
});
