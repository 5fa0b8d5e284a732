import type { Assistant, AssistantInput } from './assistant-types.ts';
import { minutesAndSeconds } from '../../runtime/types.ts';
import type { ChatFacts } from './facts.ts';
import { WINDOW_RULES } from '../scheduler/calling-windows.ts';

/**
 * The built-in deterministic coach: what answers when no OpenAI key is configured. It follows
 * the same rules as the model's instructions (assistant.ts), in the same order, and the only
 * figures it ever writes are the facts block's. Pure apart from being wrapped as an Assistant.
 */

type Rule = { topic: string; test: (message: string) => boolean };

/** A rule's test from a regular expression. */
const matching = (re: RegExp) => (message: string) => re.test(message);

/**
 * Local times some country's calling window covers, minutes after midnight: from the earliest
 * opening to the latest closing of every window the dialler keeps (8:00 to 21:30 today). A call
 * asked for outside them is outside the legal hours of every country called.
 */
const ANY_WINDOW = (() => {
  const periods = Object.values(WINDOW_RULES).flatMap((r) => r.week.flat());
  return { openMinute: Math.min(...periods.map((p) => p.openMinute)), closeMinute: Math.max(...periods.map((p) => p.closeMinute)) };
})();

const CALLING_VERB = /\b(call|dial|ring|phon(?:e|ing)|reach|contact)\w*\b/i;
/** Times no calling window covers, said in words. */
const NIGHT_WORDS = /\b(at night|late[- ]night|late (?:in the )?(?:evening|at night)|middle of the night|overnight|midnight|before dawn|crack of dawn|(?:in the )?early hours)\b/i;

/** Every clock time a message names, minutes after midnight: "10pm", "10:30 p.m.", "at 22:00", "6 in the morning". */
export function clockTimes(message: string): number[] {
  const text = message.toLowerCase().replace(/\b([ap])\.\s?m\.?/g, '$1m');
  const times: number[] = [];
  for (const m of text.matchAll(/\b(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|in the morning|in the evening|at night|tonight)\b/g)) {
    const hour = Number(m[1]) % 12;
    if (Number(m[1]) > 12) continue;
    const pm = m[3] !== 'am' && m[3] !== 'in the morning';
    times.push((hour + (pm ? 12 : 0)) * 60 + Number(m[2] ?? 0));
  }
  // A 24-hour time only after a word that makes it one ("at 22:00"): "lasted 2:50" is a length.
  for (const m of text.matchAll(/\b(?:at|from|after|before|around|by|until|till|past)\s+([01]?\d|2[0-3])[:h]([0-5]\d)\b(?!\s*(?:am|pm))/g)) {
    times.push(Number(m[1]) * 60 + Number(m[2]));
  }
  if (/\bnoon\b/.test(text)) times.push(12 * 60);
  return times;
}

/** "call them at 10pm", "ring leads at 6 in the morning", "dial late at night": a call asked for when no window is open. */
function asksToCallOutsideHours(message: string): boolean {
  // Sentence by sentence, so a time in one sentence and a call in the next are not read together.
  return message
    .replace(/\b([ap])\.\s?m\./gi, '$1m')
    .split(/[?!\n]+|\.(?:\s|$)/)
    .some(
      (sentence) =>
        CALLING_VERB.test(sentence) &&
        (NIGHT_WORDS.test(sentence) || clockTimes(sentence).some((t) => t < ANY_WINDOW.openMinute || t >= ANY_WINDOW.closeMinute)),
    );
}

/** Leaving out, cutting or hiding something the call has to say. */
const LEAVE_OUT =
  /\b(skip\w*|omit\w*|leav(?:e|ing) out|drop(?:ping)? (?:the|our|that)|remov\w*|cut(?:ting)? (?:out )?(?:the|our|that)|turn\w* off|disabl\w*|avoid\w*|get rid of|without|shorten\w*|rush(?:ing)? (?:through )?(?:the|our|that)|mumbl\w*|don['’]?t (?:play|read|give|include|do)|not (?:play|read|give|include))\b/i.source;
const NOTICE = /\b(notices?|disclosures?|announcements?|warnings?|disclaimers?|notifications?)\b/i.source;

/** Non-compliant requests, each with what the law asks instead. Checked before anything else. */
const NON_COMPLIANT: (Rule & { refusal: string })[] = [
  {
    topic: 'consent',
    test: matching(
      /\b(fake|faking|fabricat\w*|forg(?:e|ed|ing)|make up|invent\w*|pretend\w*|backdat\w*|made[- ]up)\b[^.?!]*\bconsent|\bconsent\b[^.?!]*\b(fake|fabricat\w*|forg(?:e|ed|ing)|make up|invent\w*|backdat\w*)\b/i,
    ),
    refusal: 'Consent has to be real: given by the person, and recorded as it was given. I can’t help fake, invent or backdate it.',
  },
  {
    topic: 'do_not_call',
    test: matching(
      /\b(ignor\w*|skip\w*|bypass\w*|get around|work around|circumvent\w*|disregard\w*|call anyway|still call)\b[^.?!]*\b(do[- ]not[- ]call|dnc|opt(?:ed)?[- ]?out|asked not to be called)|\b(do[- ]not[- ]call|dnc)\b[^.?!]*\b(ignor\w*|skip\w*|bypass\w*|anyway|regardless)\b/i,
    ),
    refusal: 'Numbers on a do-not-call list, and anyone who asked not to be called, must not be called. I can’t help get around that.',
  },
  {
    topic: 'recording',
    test: matching(
      new RegExp(
        [
          /\b(hid(?:e|ing)|conceal\w*|secret(?:ly)?|without (?:telling|disclosing|mentioning|saying)|not (?:tell|disclose|mention|say)|don['’]?t (?:tell|disclose|mention|say))\b[^.?!]*\brecord/i.source,
          /\brecord\w*\b[^.?!]*\b(secret(?:ly)?|hidden|without (?:telling|disclosing|consent)|undisclosed)\b/i.source,
          // "skip the recording notice", "drop the notice that calls are recorded"
          `${LEAVE_OUT}[^.?!]*(?:\\brecord\\w*\\b[^.?!]*${NOTICE}|${NOTICE}[^.?!]*\\brecord)`,
        ].join('|'),
        'i',
      ),
    ),
    refusal: 'Where the law requires it, the person must be told the call is recorded, as the call begins. I can’t help skip or hide that notice.',
  },
  {
    topic: 'calling_hours',
    test: (message) =>
      asksToCallOutsideHours(message) ||
      /\b(call|dial|ring)\w*\b[^.?!]*\b(after[- ]hours|outside (?:the )?(?:legal |allowed |permitted |calling )*(?:hours|window|times?)|(?:before|after) (?:the )?(?:legal|allowed|permitted) (?:hours|window|times?))/i.test(message),
    refusal:
      'Calls are only placed inside the legal calling hours of the called number’s country, and never late in the evening, at night or early in the morning. I can’t help call outside them.',
  },
  {
    topic: 'ai_disclosure',
    test: matching(
      new RegExp(
        [
          // "pretend to be a human", "pass it off as a real person"
          /\b(pretend\w*|pos(?:e|ing) as|claim\w*|impersonat\w*|pass(?:es|ing)?(?: it(?:self)?)?(?: off)? as|masquerad\w*)\b[^.?!]*\b(human|real person|a person|real people|live (?:agent|person|rep))\b/i.source,
          // "tell them it's a real person"
          /\b(say|says|saying|tell\w*)\b[^.?!]*\b(it['’]?s|it is|we are|we['’]re|they are|they['’]re|i am|i['’]m|you are|you['’]re|the agent is)\s+(?:an? )?(human|real person|real human|live person|person)\b/i.source,
          // "don't tell them it's an AI", "hide that the call is automated", "skip the AI disclosure"
          /\b(hid(?:e|ing)|conceal\w*|not (?:tell|say|disclose|mention|reveal)|don['’]?t (?:tell|say|disclose|mention|reveal|let them know)|without (?:telling|saying|disclosing|mentioning|revealing))\b[^.?!]*\b(ai|a\.i\.|bot|robot|automated|artificial|machine)\b/i.source,
          `${LEAVE_OUT}[^.?!]*\\b(?:ai|a\\.i\\.|bot|automated|automation)[- ]${NOTICE}`,
        ].join('|'),
        'i',
      ),
    ),
    refusal: 'The agent always says it is an automated assistant and never claims to be a person. I can’t help hide that.',
  },
  {
    topic: 'caller_id',
    test: matching(
      /\b(spoof\w*|fake|faking|forg(?:e|ed|ing)|mask\w*|hid(?:e|ing)|withh(?:o|e)ld\w*|block\w*|disguis\w*)\b[^.?!]*\b(caller[- ]?ids?|calling line id\w*|our (?:phone )?number|the number we call from)\b|\bcaller[- ]?ids?\b[^.?!]*\b(spoof\w*|fake|mask\w*|hidden|withheld|blocked)\b/i,
    ),
    refusal: 'Calls show a real number the person can call back; spoofing, faking or hiding the caller ID is not allowed. I can’t help with that.',
  },
];

/** Who powers, built or hosts the assistant: an identity word and the assistant itself in one question. */
const IDENTITY_WORD =
  /\b(power(?:s|ed|ing)?|buil[dt]|made|makes?|creat\w*|develop\w*|hosts?|hosted|behind|models?|llm|engine|company|vendor|provider|supplier|technology|tech|runs? on|based on|under the hood)\b/i;
const ABOUT_ASSISTANT = /\b(you|your|yourself|this (?:assistant|chat|bot|coach|tool|app))\b/i;
const NAMES_A_MODEL = /\b(are|r) (you|u)\b[^?]*\b(chat\s?gpt|gpt|open\s?ai|claude|gemini|google|microsoft|llama)\b/i;
/** "Are you a human?", "are you a bot", "is this a real person?", "am I talking to someone real?" */
const ASKS_IF_AI =
  /\b(are|r) (you|u)\b[^?]*\b(an? )?(ai|a\.i\.|bot|chat\s?bot|robot|machine|human|real|person|artificial|computer|program|automated)\b|\b(am i|are we) (talking|speaking|chatting) (to|with)\b|\bis (this|it|that) (an? )?(real )?(ai|a\.i\.|bot|chat\s?bot|robot|human|person|machine|automated|computer)\b|\bis there (an? )?(real |actual )?(human|person)\b/i;
const ASKS_ABOUT_MONEY =
  /\b(price|prices|pricing|priced|cost|costs|costing|billing|billed|invoices?|invoicing|subscriptions?|fees?|payments?|refunds?|discounts?|per minute|upgrade|downgrade|my plan|our plan|which plan|plans|tariffs?)\b/i;
const ASKS_FOR_FIGURES =
  /\b(connect(?:ion)?s?|connected|answer(?:ed)? rate|pick[- ]?up|how many|calls?|appointments?|meetings?|book(?:ed|ings?)?|outcomes?|results?|stats|statistics|numbers|figures|performance|average|length|long|duration|summary|summari[sz]e|report|how (?:am i|are we|is it|did we|did i) (?:doing|do))\b/i;
const ASKS_FOR_ADVICE = /\b(improve|tips?|advice|advise|better|increase|boost|raise|script|pitch|objections?|opener|opening|voicemails?|follow[- ]?ups?|best time|what should|how (?:can|do|should) (?:i|we))\b/i;

/** "Northwind Calls’" and "Acme’s". */
function possessive(name: string): string {
  return /s$/i.test(name) ? `${name}’` : `${name}’s`;
}

function percent(f: ChatFacts): string {
  return f.connectRatePercent === null
    ? 'The connect rate was not measured: no call was dialled in that period.'
    : `${f.connectRatePercent}% of dialled calls connected (${f.connected} of ${f.dialled}).`;
}

function average(f: ChatFacts): string {
  return f.averageConnectedSeconds === null
    ? 'The average call length was not measured: no call connected in that period.'
    : `A connected call lasted ${minutesAndSeconds(f.averageConnectedSeconds)} on average.`;
}

function outcomes(f: ChatFacts): string {
  if (!f.outcomes.length) return 'No call has an outcome yet.';
  return `Outcomes: ${f.outcomes.map((o) => `${o.outcome.replace(/_/g, ' ')} ${o.count}`).join(', ')}.`;
}

/** The facts a question asks for, as sentences; all of them when it names none in particular. */
function figures(message: string, f: ChatFacts): string {
  const m = message.toLowerCase();
  const asked: string[] = [];
  if (/connect|answer|pick/.test(m)) asked.push(percent(f));
  if (/average|length|long|duration/.test(m)) asked.push(average(f));
  if (/appointment|meeting|book/.test(m)) asked.push(`Appointments booked: ${f.appointments}.`);
  if (/outcome/.test(m)) asked.push(outcomes(f));
  const counts = `${f.requested} calls were requested and ${f.finished} finished; ${f.dialled} of those were dialled.`;
  const parts = asked.length === 0 ? [counts, percent(f), average(f), `Appointments booked: ${f.appointments}.`, outcomes(f)] : /how many|calls?\b/.test(m) ? [counts, ...asked] : asked;
  return `For ${f.business}, over the last 30 days: ${parts.join(' ')}`;
}

/** Advice that follows from the facts, with no figure of its own. */
function advice(f: ChatFacts): string {
  const tips: string[] = [];
  const count = (o: string) => f.outcomes.find((x) => x.outcome === o)?.count ?? 0;
  if (f.requested === 0) tips.push('There are no calls in the last 30 days yet, so start by queueing a first batch of leads; I can go through the results once they come in.');
  if (f.connectRatePercent !== null && (count('voicemail') > 0 || count('no_answer') > 0)) {
    tips.push('Many calls did not reach a person: try different times of day for the leads that went to voicemail or were not answered, and keep the lead lists current.');
  }
  if (f.connected > 0 && f.appointments === 0) tips.push('Calls connect but no meeting was booked yet: make the ask for a short meeting earlier and more concrete, with two times to choose from.');
  if (count('not_interested') > 0) tips.push('For prospects who were not interested, sharpen the first sentence around one problem the business solves, and qualify the lead list more tightly.');
  if (count('call_back_later') > 0) tips.push('Prospects asked to be called back: queue those leads again for the time they named.');
  if (f.appointments > 0) tips.push('Meetings are being booked: look at what those calls had in common and reuse it in the opening.');
  tips.push('Keep every call compliant: respect do-not-call requests at once and disclose recording where required.');
  return tips.join(' ');
}

/** The coach's answer to one message. Its order is the rules' order: compliance, identity, money, facts. */
export function coachReply(input: Pick<AssistantInput, 'brand' | 'facts' | 'message'>): string {
  const { brand, facts, message } = input;
  const contact = brand.supportEmail ? `${brand.name} at ${brand.supportEmail}` : brand.name;
  const refused = NON_COMPLIANT.filter((r) => r.test(message));
  if (refused.length) {
    return `I can’t help with that. ${refused.map((r) => r.refusal).join(' ')} I’m happy to help you improve results the compliant way: better openings, better timing and better follow-up.`;
  }
  if ((IDENTITY_WORD.test(message) && ABOUT_ASSISTANT.test(message)) || NAMES_A_MODEL.test(message)) {
    return `I’m ${possessive(brand.name)} platform: the sales-coach assistant ${brand.name} provides. I’m an AI assistant, and I only see ${possessive(facts.business)} calling results.`;
  }
  if (ASKS_IF_AI.test(message)) {
    // The same plain answer to "are you an AI?" and "are you a human?": never a leading "Yes".
    return `I’m an AI assistant, not a person: ${possessive(brand.name)} sales coach. I can go through ${possessive(facts.business)} last 30 days of calling with you.`;
  }
  if (ASKS_ABOUT_MONEY.test(message)) {
    return `I can’t help with billing, pricing or plans. Please contact ${contact}: they can answer that.`;
  }
  const wantsAdvice = ASKS_FOR_ADVICE.test(message);
  if (ASKS_FOR_FIGURES.test(message) && !wantsAdvice) return figures(message, facts);
  if (wantsAdvice) return `${figures('', facts)} ${advice(facts)}`;
  return `I’m ${possessive(brand.name)} sales coach, an AI assistant. I can go through ${possessive(facts.business)} calling over the last 30 days: calls, connect rate, call length, outcomes and appointments, and suggest what to try next. ${figures('', facts)}`;
}

export function createCoach(): Assistant {
  return { name: 'coach', answer: async (input) => coachReply(input) };
}
