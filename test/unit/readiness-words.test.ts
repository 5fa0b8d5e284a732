import test from 'ava';
import fc from 'fast-check';
import { readinessFactsArb, readyFacts } from '../helpers/readiness-facts.ts';
import { assessReadiness, BLOCKER_CODES, type Blocker } from '../../actors/customer/readiness.ts';
import { consoleWordsOf } from '../../actors/customer/readiness-words.ts';

/*
 * Issue 21: the console shows each readiness blocker in plain words, naming who must act (you,
 * your customer, the operator), what to do and, for a move made in the console, where.
 */

const CUSTOMER = '0b7e4d2c-1111-4222-8333-444455556666';
const asAnswered = (b: Blocker) => ({ code: b.code, waiting_on: b.waitingOn, action: b.action });

/** Every blocker the rule can give, over arbitrary facts. */
const blockersArb = readinessFactsArb.map((f) => ({ mode: f.mode, blockers: assessReadiness(f).live.blockers }));

test('every blocker the rule can give has who must act, words for them, what to do, and a console place exactly when the move is made in the console', (t) => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(blockersArb, ({ mode, blockers }) => {
      for (const b of blockers) {
        seen.add(b.code);
        const w = consoleWordsOf(asAnswered(b), CUSTOMER, mode);
        const expected = { reseller: 'you', customer: 'your_customer', service: 'operator' }[b.waitingOn];
        if (w.who !== expected) return false;
        if (w.who_label !== { you: 'You', your_customer: 'Your customer', operator: 'The operator' }[w.who]) return false;
        if (w.what_to_do.trim().length < 10) return false;
        if (b.action?.type === 'console' && !w.where?.path.startsWith('/console/')) return false;
        if (!b.action && w.where !== null) return false;
      }
      return true;
    }),
    { numRuns: 2000 },
  );
  t.deepEqual([...seen].sort(), [...BLOCKER_CODES].sort(), 'the property reached every blocker');
});

test('the account steps are made at Going live, money under Billing, the terms on the customer page; a provisioning step names its API request', (t) => {
  const live = assessReadiness(readyFacts({ mode: 'live', accountMode: 'test', kybStatus: 'pending', agreementSigned: false, availableCents: 0, termsAccepted: false, scriptCertified: false })).live.blockers;
  const words = Object.fromEntries(live.map((b) => [b.code, consoleWordsOf({ ...asAnswered(b), action: b.action?.type === 'api' ? { ...b.action, path: b.action.path.replace('{id}', CUSTOMER) } : b.action }, CUSTOMER, 'live')]));
  t.like(words.reseller_not_live, { who: 'you', where: { label: 'Going live', path: '/console/going-live' } });
  t.like(words.kyb_incomplete, { where: { label: 'Going live › Business details' }, what_to_do: 'Complete business verification in the console.' });
  t.like(words.agreement_unsigned, { where: { label: 'Going live › Agreement' } });
  t.like(words.insufficient_balance, { where: { label: 'Billing', path: '/console/billing' }, what_to_do: 'Top up your balance in the console.' });
  t.like(words.customer_not_attested, { who: 'you', where: { path: `/console/customers/${CUSTOMER}` } });
  t.like(words.script_uncertified, { who: 'you', where: null, what_to_do: `Ask for the call script. Provisioning is asked for through the API: POST /v1/customers/${CUSTOMER}/provisioning {"steps":["script"]}.` });
});
