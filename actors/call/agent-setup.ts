import type { AgentSetup, ToolSpec } from '../../telephony/speech-bridge.ts';
import { nationalFormat } from '../shared/phone.ts';
import { RECORDING_OBJECTION_TOOL } from './recording-objection.ts';

/** The agent's tools (DESIGN: book appointment, end call, opt out → do-not-call). */
export const TOOLS: ToolSpec[] = [
  {
    name: 'book_appointment',
    description: 'Book a meeting the prospect agreed to. Confirm the day and time aloud first.',
    parameters: {
      type: 'object',
      properties: {
        start_at: { type: 'string', description: 'Start, ISO 8601 with offset, in the time zone of the business you call for' },
        duration_minutes: { type: 'integer', minimum: 10, maximum: 120 },
        attendee_name: { type: 'string' },
        notes: { type: 'string' },
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
    description: 'The person asked not to be called again: record it at once, apologise, and end the call.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
  },
  RECORDING_OBJECTION_TOOL,
];

/**
 * The agent's first words. They name the business it calls for, say it is automated (it never
 * passes as a person) and that the call may be recorded, give a number that reaches the business
 * (the caller ID: the customer's own number) and offer the opt-out. An artificial-voice call
 * must identify the business at its start and give a number to reach it (47 CFR 64.1200(b)(1),
 * (b)(2)); the opt-out offer is docs/compliance.md ("Consent for AI-voice calls")'s. Pure.
 */
export function greeting(businessName: string, callbackNumber: string | null = null): string {
  const reach = callbackNumber ? ` You can reach ${businessName} at ${nationalFormat(callbackNumber)}.` : '';
  return (
    `Hello, this is an automated assistant calling on behalf of ${businessName}. This call may be recorded.${reach} ` +
    'If you would rather not get these calls, just say so and you will not be called again. Do you have a moment?'
  );
}

/** What the call's compliance record keeps of the agent's opening (db/compliance-records.ts). */
export function identificationOf(setup: Pick<AgentSetup, 'greeting'>): { identification: string; optOutOffered: boolean } {
  return { identification: setup.greeting, optOutOffered: /you will not be called again/.test(setup.greeting) };
}

/**
 * What the agent is told for one call: whose behalf, the rules it may never break, and the
 * customer's certified script. It never names the platform or any supplier.
 */
export function agentSetup(c: {
  /** The customer's name for calls: `brand_name`, else `name` (customer/views.ts `businessName`). */
  businessName: string;
  /** The caller ID (E.164), said in the greeting as the number that reaches the business; null if unknown. */
  callbackNumber?: string | null;
  website: string | null;
  calledBusiness: string | null;
  language: string;
  timezone: string;
  to: string;
  /** The customer's certified call script. */
  script?: string | null;
  /** What research found about the customer's own business (website, offer). */
  researchNotes?: string | null;
}): AgentSetup {
  const opening = greeting(c.businessName, c.callbackNumber ?? null);
  const instructions = [
    `You are a friendly sales representative calling on behalf of ${c.businessName}${c.website ? ` (${c.website})` : ''}.`,
    c.calledBusiness ? `You are calling ${c.calledBusiness}.` : 'You are calling a local business.',
    `Speak ${c.language}. Open the call with these words, in ${c.language}: "${opening}" Always call the business you work for ${c.businessName}, never "our client" or any other phrase that hides its name.`,
    'If asked whether you are an AI, a bot or a real person, say plainly that you are an automated assistant. Never claim or pretend to be human.',
    `If the person asks not to be called again, call mark_do_not_call immediately, apologise, and end the call.`,
    `Your goal is a short meeting. Times are in ${c.timezone}. Confirm the day and time before calling book_appointment.`,
    'Never pressure, never invent facts, prices or consent, and never mention any technology or company behind this call other than ' +
      `${c.businessName}. When the conversation is over, call end_call.`,
    c.researchNotes ? `What you know about ${c.businessName}: ${c.researchNotes}` : '',
    c.script ? `Follow this certified call script, in your own natural words:\n${c.script}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { instructions, businessName: c.businessName, greeting: opening, tools: TOOLS, language: c.language, to: c.to, timezone: c.timezone };
}
