import test from 'ava';
import { computeFacts, formatFacts, type FactCall } from '../../actors/chat/facts.ts';
import { clockTimes, coachReply } from '../../actors/chat/coach.ts';
import { chatMessages, lastTurns, systemPrompt } from '../../actors/chat/assistant.ts';
import type { ChatTurn } from '../../actors/chat/assistant-types.ts';
import { refuseMessage, refuseSession, sessionStatus, type MessageGate } from '../../actors/chat/session-rules.ts';

const NOW = new Date('2026-08-04T12:00:00.000Z');
const BRAND = { name: 'Northwind Calls', supportEmail: 'help@northwind.example' };

const done = (outcome: string, seconds: number, extra: Partial<FactCall> = {}): FactCall => ({
  status: 'completed',
  outcome,
  dialed_at: NOW,
  duration_seconds: seconds,
  appointment_id: null,
  ...extra,
});

// — facts —

test('facts: requested, finished, dialled, connected, connect rate, average length, outcomes, appointments', (t) => {
  const calls: FactCall[] = [
    { status: 'queued', outcome: null, dialed_at: null, duration_seconds: null, appointment_id: null },
    { status: 'expired', outcome: 'expired', dialed_at: null, duration_seconds: null, appointment_id: null },
    done('appointment_booked', 301, { appointment_id: 'a1' }),
    done('not_interested', 100),
    done('voicemail', 20),
  ];
  const f = computeFacts(calls, 'Bright Dental', NOW);
  t.like(f, { business: 'Bright Dental', requested: 5, finished: 4, dialled: 3, connected: 2, connectRatePercent: 67, averageConnectedSeconds: 201, appointments: 1 });
  t.deepEqual(f.outcomes, [
    { outcome: 'appointment_booked', count: 1 },
    { outcome: 'expired', count: 1 },
    { outcome: 'not_interested', count: 1 },
    { outcome: 'voicemail', count: 1 },
  ]);
  t.is(f.from.toISOString(), '2026-07-05T12:00:00.000Z');
  const block = formatFacts(f);
  t.true(block.startsWith('FACTS for Bright Dental: calls requested from 2026-07-05 to 2026-08-04 (the last 30 days).'));
  t.regex(block, /- Connect rate: 67% \(2 of 3 dialled calls\)/);
  t.regex(block, /- Average length of a connected call: 201 seconds \(3 min 21 s\)/);
  t.regex(block, /- Outcomes: appointment_booked 1, expired 1, not_interested 1, voicemail 1/);
});

test('facts: what was not measured says so instead of a number', (t) => {
  const empty = formatFacts(computeFacts([], 'Quiet Co', NOW));
  t.regex(empty, /- Calls requested: 0/);
  t.regex(empty, /- Connect rate: not measured \(no call was dialled\)/);
  t.regex(empty, /- Average length of a connected call: not measured \(no call connected\)/);
  t.regex(empty, /- Outcomes: none yet/);
  const noneConnected = computeFacts([done('no_answer', 0), done('busy', 0)], 'Quiet Co', NOW);
  t.is(noneConnected.connectRatePercent, 0);
  t.is(noneConnected.averageConnectedSeconds, null);
});

// — session rules —

const gate = (over: Partial<MessageGate> = {}): MessageGate => ({
  revoked_at: null,
  expires_at: new Date(NOW.getTime() + 60_000),
  messages_sent: 0,
  message_limit: 200,
  mode: 'live',
  customer_status: 'active',
  account_status: 'active',
  available_cents: 2,
  ...over,
});

test('session rules: revoked, expired, paused or suspended, exhausted, then the balance', (t) => {
  t.is(refuseMessage(gate(), NOW, 2), null);
  t.is(refuseMessage(gate({ revoked_at: NOW, expires_at: NOW }), NOW, 2), 'session_revoked', 'a revocation outranks expiry');
  t.is(refuseMessage(gate({ expires_at: NOW }), NOW, 2), 'session_expired', 'expiry is exclusive: at expires_at it is over');
  t.is(refuseMessage(gate({ customer_status: 'paused' }), NOW, 2), 'session_revoked');
  t.is(refuseMessage(gate({ account_status: 'suspended' }), NOW, 2), 'session_revoked');
  t.is(refuseMessage(gate({ messages_sent: 200 }), NOW, 2), 'session_exhausted');
  t.is(refuseMessage(gate({ messages_sent: 199 }), NOW, 2), null);
  t.is(refuseMessage(gate({ available_cents: 1 }), NOW, 2), 'insufficient_balance');
  t.is(refuseMessage(gate({ available_cents: -500, mode: 'test' }), NOW, 2), null, 'test sessions never need money');
  t.is(refuseMessage(gate({ messages_sent: 200, available_cents: 0 }), NOW, 2), 'session_exhausted');
  t.is(refuseSession(gate({ messages_sent: 200, available_cents: 0 }), NOW), null, 'the page may still open an exhausted session');
  t.is(sessionStatus(gate(), NOW), 'active');
  t.is(sessionStatus(gate({ messages_sent: 200 }), NOW), 'exhausted');
  t.is(sessionStatus(gate({ expires_at: NOW }), NOW), 'expired');
  t.is(sessionStatus(gate({ revoked_at: NOW }), NOW), 'revoked');
});

// — the model's request —

test('the model reads the rules, the facts and the last 12 turns only', (t) => {
  const facts = computeFacts([done('completed', 60)], 'Bright Dental', NOW);
  const history: ChatTurn[] = Array.from({ length: 15 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `t${i}` }));
  t.deepEqual(lastTurns(history).map((h) => h.content), history.slice(3).map((h) => h.content));
  t.deepEqual(lastTurns(history.slice(0, 4)), history.slice(0, 4));
  const messages = chatMessages({ brand: BRAND, facts, history, message: 'now?' });
  t.is(messages.length, 1 + 12 + 1);
  t.is(messages[0].role, 'system');
  t.is(messages[0].content, systemPrompt(BRAND, facts));
  t.deepEqual(messages.at(-1), { role: 'user', content: 'now?' });
  const prompt = systemPrompt(BRAND, facts);
  t.true(prompt.includes(formatFacts(facts)));
  t.regex(prompt, /Point the person to Northwind Calls \(help@northwind\.example\)/);
  t.regex(systemPrompt({ name: 'Acme', supportEmail: null }, facts), /Point the person to Acme\./);
});

test("the model's instructions hold the same refusals and the same plain answer about being an AI as the coach", (t) => {
  const prompt = systemPrompt(BRAND, computeFacts([], 'Bright Dental', NOW));
  t.regex(prompt, /skip, shorten or leave out the recording notice/);
  t.regex(prompt, /call outside legal calling hours, and treat a request to call at a time such as 10pm/);
  t.regex(prompt, /pretend to be a human or hide that it is an AI/);
  t.regex(prompt, /spoof or hide the caller ID/);
  t.regex(prompt, /plain refusal, never figures or tips/);
  t.regex(prompt, /a human or a real person, say plainly that you are an AI assistant\. Never answer "yes" to whether you are a human/);
});

// — the built-in coach —

const FACTS = computeFacts(
  [done('appointment_booked', 300, { appointment_id: 'a' }), done('not_interested', 120), done('call_back_later', 90), done('voicemail', 30), done('no_answer', 0)],
  'Bright Dental',
  NOW,
);
const ask = (message: string, facts = FACTS) => coachReply({ brand: BRAND, facts, message });
/** Numbers the facts block holds (and "30" of "the last 30 days"). */
const numbersOf = (text: string) => new Set(text.match(/\d+/g) ?? []);

test('coach: compliance is refused first, even inside another question', (t) => {
  for (const q of [
    'Can you fake consent for this list?',
    'Help me fabricate consent records',
    'What is our connect rate, and can we backdate consent?',
    'How can I bypass the DNC list?',
    'Should we still call numbers on the do-not-call list anyway?',
    'Is it ok to hide that the call is recorded?',
    "Can we record calls without telling people?",
    'Can I call them after hours to reach more people?',
  ]) {
    t.regex(ask(q), /^I can’t help with that\./, q);
  }
  for (const q of [
    'How do I respect the do-not-call list?',
    'What does consent mean for us?',
    'Should calls be recorded?',
    'How should we word the recording notice?',
    'Drop the voicemail message and record a new one',
    'How many calls dropped during the recording notice?',
    'Can we call them at 10am?',
    'Why did the call last 2:50?',
    'How can the agent sound more natural?',
    'What is our connect rate?',
  ]) {
    t.notRegex(ask(q), /^I can’t help with that/, q);
  }
});

test('coach: recording notices, calling hours, passing as a person and caller ID are refused with the reason', (t) => {
  const cases: [string, RegExp][] = [
    ['Skip the recording notice', /told the call is recorded/],
    ['Can we leave out the notice that calls are recorded?', /told the call is recorded/],
    ["Let's drop the recording disclosure to save time.", /told the call is recorded/],
    ['call them at 10pm', /legal calling hours/],
    ['Can we call them at 10 p.m. when they are home?', /legal calling hours/],
    ['Ring the leads at 6 in the morning', /legal calling hours/],
    ['dial the list at 22:30', /legal calling hours/],
    ['Should we call late at night?', /legal calling hours/],
    ['Can the agent pretend to be a human?', /never claims to be a person/],
    ["Don't tell them it's an AI", /never claims to be a person/],
    ['Tell them it is a real person calling', /never claims to be a person/],
    ['skip the AI disclosure', /never claims to be a person/],
    ['fake consent for the new list', /Consent has to be real/],
    ['Can we spoof our caller ID?', /caller ID/],
  ];
  for (const [q, why] of cases) {
    const reply = ask(q);
    t.regex(reply, /^I can’t help with that\./, q);
    t.regex(reply, why, q);
    t.notRegex(reply, /For Bright Dental|connect rate|\d+%/, `${q}: a refusal, not statistics`);
  }
});

test('coach: clock times are read as the minutes after midnight they name', (t) => {
  t.deepEqual(clockTimes('at 10pm, 10:30 p.m., 12am, 12pm, 6 in the evening, 7 in the morning, 11 at night'), [1320, 1350, 0, 720, 1080, 420, 1380]);
  t.deepEqual(clockTimes('call at 22:00 or from 7h30'), [1320, 450]);
  t.deepEqual(clockTimes('it lasted 2:50 and cost 13 credits'), [], 'a length or a count is not a time of day');
});

test('coach: identity, AI, money', (t) => {
  for (const q of ['Who powers you?', 'who built this assistant', 'What model are you?', 'Are you GPT?', 'Which company is behind you?']) {
    t.regex(ask(q), /^I’m Northwind Calls’ platform/, q);
  }
  // A plain "I'm an AI assistant, not a person" to both kinds of question: a leading "Yes" to
  // "are you a human?" would say the opposite.
  for (const q of [
    'Are you an AI?',
    'are you a bot',
    'Is this a bot?',
    'are you a chatbot or AI?',
    'Are you human?',
    'Are you a human?',
    'are you a real person',
    'Is this a real person?',
    'Am I talking to a person?',
    'Is there a human I can talk to?',
  ]) {
    const reply = ask(q);
    t.regex(reply, /^I’m an AI assistant, not a person/, q);
    t.notRegex(reply, /\byes\b/i, q);
  }
  for (const q of ['How much does each minute cost?', 'What plans do you offer?', 'Can I get a refund?', 'Explain my billing']) {
    t.is(ask(q), 'I can’t help with billing, pricing or plans. Please contact Northwind Calls at help@northwind.example: they can answer that.', q);
  }
  t.regex(coachReply({ brand: { name: 'Acme', supportEmail: null }, facts: FACTS, message: 'pricing?' }), /Please contact Acme: they/);
});

test('coach: figures come from the facts and nowhere else', (t) => {
  t.is(ask('What is our connect rate?'), 'For Bright Dental, over the last 30 days: 60% of dialled calls connected (3 of 5).');
  t.is(ask('What is the average length?'), 'For Bright Dental, over the last 30 days: A connected call lasted 2 min 50 s on average.');
  t.regex(ask('How long are our calls on average?'), /5 calls were requested .* A connected call lasted 2 min 50 s on average\.$/);
  t.regex(ask('How many calls did we make?'), /5 calls were requested and 5 finished; 5 of those were dialled\./);
  t.regex(ask('How many appointments?'), /Appointments booked: 1\.$/);
  const allowed = new Set([...numbersOf(formatFacts(FACTS)), '2', '50']);
  for (const q of ['How are we doing?', 'Give me tips to improve', 'hello', 'What were the outcomes?', 'Any advice on voicemails?']) {
    const reply = ask(q);
    for (const n of numbersOf(reply)) t.true(allowed.has(n), `${n} is not a measured figure: ${reply}`);
  }
  const empty = computeFacts([], 'Quiet Co', NOW);
  t.regex(ask('What is our connect rate?', empty), /The connect rate was not measured/);
  t.regex(ask('average call length?', empty), /The average call length was not measured/);
  t.regex(ask('any tips?', empty), /no calls in the last 30 days yet/);
});
