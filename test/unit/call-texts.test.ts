import test from 'ava';
import { agentSetup } from '../../actors/call/agent-setup.ts';
import { composeOpening } from '../../actors/call/opening.ts';
import { summarise, type CallOutcome } from '../../actors/call/outcome.ts';
import { businessName } from '../../actors/customer/views.ts';
import { minutesAndSeconds } from '../../runtime/types.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';

/** What the call agent says and what the reseller reads about a call (issue 10 §5). */

const OPENING = composeOpening({ registeredName: 'Bright Dental LLC', callbackNumber: '+12025550188', to: '+12025550101', language: 'en-US' });
const SETUP = {
  businessName: 'Bright Smile Dental',
  opening: OPENING.text,
  website: 'https://brightsmile.example',
  calledBusiness: 'Acme Plumbing',
  language: 'en-US',
  timezone: 'America/New_York',
  to: '+12025550101',
  script: 'Offer a free check-up.',
  researchNotes: null,
};

test('the agent names the business it calls for in its instructions, is told the opening already played, and no supplier', (t) => {
  const setup = agentSetup(SETUP);
  t.is(setup.businessName, 'Bright Smile Dental');
  t.is(setup.greeting, OPENING.text);
  t.regex(setup.greeting, /^Hello, this call is on behalf of Bright Dental LLC\. To stop these calls, press 9 or say stop\./);
  t.true(setup.instructions.includes(`The call has already opened with these words, played to the person in English: "${OPENING.text}" Do not repeat them`));
  t.regex(setup.instructions, /^Speak English \(en-US\)/);
  for (const text of [setup.greeting, setup.instructions]) {
    t.notRegex(text.replace(/never "our client"/, ''), /our client/i, 'never a phrase that hides the business');
    t.false(namesSupplier(text), text);
  }
});

test('the agent says plainly it is automated and never says yes to being human', (t) => {
  const { instructions } = agentSetup(SETUP);
  t.regex(instructions, /whether you are an AI, a bot or a real person, say plainly that you are an automated assistant/);
  t.notRegex(instructions, /say yes/i);
  t.regex(instructions, /Never claim or pretend to be human/);
});

test("a customer's business name is its brand_name, else its name; a blank brand_name does not hide it", (t) => {
  t.is(businessName({ name: 'Bright Dental LLC', brand_name: 'Bright Smile Dental' }), 'Bright Smile Dental');
  t.is(businessName({ name: 'Bright Dental LLC', brand_name: null }), 'Bright Dental LLC');
  t.is(businessName({ name: 'Bright Dental LLC', brand_name: '   ' }), 'Bright Dental LLC');
});

test('a duration reads as minutes and seconds, never rounded up to billed minutes', (t) => {
  t.is(minutesAndSeconds(90), '1 min 30 s');
  t.is(minutesAndSeconds(120), '2 min');
  t.is(minutesAndSeconds(45), '45 s');
  t.is(minutesAndSeconds(170), '2 min 50 s');
  t.is(minutesAndSeconds(61), '1 min 1 s');
});

test('summaries state the real length of the call', (t) => {
  t.is(summarise('call_back_later', 90, null), 'The call was answered; the prospect asked to be called back later. It ended after 1 min 30 s.');
  t.is(summarise('not_interested', 60, null), 'The call was answered; the prospect was not interested. It ended after 1 min.');
  t.is(summarise('completed', 61, null), 'The call was answered and ended after 1 min 1 s.');
  t.regex(summarise('appointment_booked', 180, { startLocal: '2025-03-31 10:00', timezone: 'America/New_York' }), /it ended after 3 min\.$/);
  t.is(summarise('completed', 0, null), 'The call was answered and ended.');
});

test('no summary names a supplier', (t) => {
  const outcomes: CallOutcome[] = ['appointment_booked', 'not_interested', 'call_back_later', 'do_not_call', 'voicemail', 'time_limit', 'completed', 'no_answer', 'busy', 'failed'];
  for (const o of outcomes) t.false(namesSupplier(summarise(o, 95, null)), o);
});
