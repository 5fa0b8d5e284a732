import type { AgentSetup, ToolSpec, TurnSettings } from '../../telephony/speech-bridge.ts';
import { OPENING_WORDS, openingLanguageOf } from './opening-words.ts';

/** The tool the agent calls when the callee objects to the recording (carried out by recording-objection.ts). */
export const RECORDING_OBJECTION_TOOL: ToolSpec = {
  name: 'recording_objection',
  description:
    'The person objects to the call being recorded (or asks for it not to be recorded): call this at once, before anything else, then do what its answer says.',
  parameters: { type: 'object', properties: {} },
};

/** The agent's tools (DESIGN: book appointment, end call, opt out → do-not-call). */
export const TOOLS: ToolSpec[] = [
  {
    name: 'find_free_slots',
    description:
      'Find times the business can meet: up to three free slots, soonest first. Each has start_at (pass it to book_appointment as is) and says (how to say it to the person). ' +
      'Call it before proposing any time.',
    parameters: {
      type: 'object',
      properties: {
        after: { type: 'string', description: 'Only slots from this date or date and time on (ISO 8601), e.g. when the person asks for next week; a date (YYYY-MM-DD) or a time without an offset is on the business\'s clock' },
        part_of_day: { type: 'string', enum: ['morning', 'afternoon', 'any'] },
      },
    },
  },
  {
    name: 'book_appointment',
    description:
      'Book a meeting the person agreed to, at a start_at given by find_free_slots. Confirm the day and time aloud first. ' +
      'If it answers booked false with reason slot_taken, the time was just taken: say so and offer its next_slots.',
    parameters: {
      type: 'object',
      properties: {
        start_at: { type: 'string', description: 'Start, ISO 8601 with offset: a start_at from find_free_slots' },
        attendee_name: { type: 'string', description: 'The name of the person who will attend' },
        notes: { type: 'string', description: 'What the meeting is about, anything the business should know' },
      },
      required: ['start_at'],
    },
  },
  {
    name: 'end_call',
    description: 'Hang up politely once the conversation is over.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', enum: ['appointment_booked', 'not_interested', 'call_back_later', 'voicemail', 'other'] } },
      required: ['reason'],
    },
  },
  {
    name: 'mark_do_not_call',
    description:
      'The person asked not to be called again, or said stop: call this at once. It records the request and ends the call within a second, ' +
      'so say nothing after calling it.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
  },
  RECORDING_OBJECTION_TOOL,
];

/**
 * What the agent is told for one call: whose behalf, the rules it may never break, the words of
 * the opening the call has already played to the callee (actors/call/opening.ts: the model does
 * not say them, it continues from them), in the calling language, and the customer's certified
 * script. It never names the platform or any supplier.
 */
export function agentSetup(c: {
  /** The customer's name for calls: `brand_name`, else `name` (customer/views.ts `businessName`). */
  businessName: string;
  /** The prepared opening's text (composeOpening(...).text): the callee hears it before the agent speaks. */
  opening: string;
  website: string | null;
  calledBusiness: string | null;
  /** BCP 47 calling language, e.g. fr-FR. */
  language: string;
  timezone: string;
  to: string;
  /** The customer's certified call script. */
  script?: string | null;
  /** What research found about the customer's own business (website, offer). */
  researchNotes?: string | null;
  /** What research found about the called business: said to the model, never to the API. */
  prospectNotes?: string | null;
  turn?: TurnSettings;
  voice?: string;
}): AgentSetup {
  const speak = OPENING_WORDS[openingLanguageOf(c.language)].name;
  const instructions = [
    `Speak ${speak} (${c.language}) for the whole call, whatever language you are addressed in first.`,
    `You are a friendly sales representative calling on behalf of ${c.businessName}${c.website ? ` (${c.website})` : ''}.`,
    c.calledBusiness ? `You are calling ${c.calledBusiness}.` : 'You are calling a local business.',
    `The call has already opened with these words, played to the person in ${speak}: "${c.opening}" Do not repeat them; continue from their question. ` +
      `Always call the business you work for ${c.businessName}, never "our client" or any other phrase that hides its name.`,
    'If asked whether you are an AI, a bot or a real person, say plainly that you are an automated assistant. Never claim or pretend to be human.',
    'If the person asks not to be called again, or says stop, call mark_do_not_call immediately and say nothing more: the call ends at once.',
    'If you hear a voicemail greeting or an automated phone menu (IVR) instead of a person, say a short, polite goodbye and call end_call with reason voicemail.',
    `Your goal is a short meeting. Call find_free_slots before proposing a time, offer two or three of its slots as their "says" reads ` +
      `(the person's own time where it differs from ${c.timezone}), never a time it did not give, and confirm the day and time before calling book_appointment. ` +
      'If no slot is free, offer that someone from the business calls back.',
    'Never pressure, never invent facts, prices or consent, and never mention any technology or company behind this call other than ' +
      `${c.businessName}. When the conversation is over, call end_call.`,
    c.researchNotes ? `What you know about ${c.businessName}: ${c.researchNotes}` : '',
    c.prospectNotes ? `What you know about the business you are calling: ${c.prospectNotes}` : '',
    c.script ? `Follow this certified call script, in your own natural words:\n${c.script}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return {
    instructions,
    businessName: c.businessName,
    greeting: c.opening,
    tools: TOOLS,
    language: c.language,
    to: c.to,
    timezone: c.timezone,
    ...(c.turn ? { turn: c.turn } : {}),
    ...(c.voice ? { voice: c.voice } : {}),
  };
}
