/**
 * People call back (issue 23, §5). A call to a customer's rented number reaches the voice webhook
 * the number was bought with (`POST /telephony/twilio/inbound`); it is recorded as an inbound call
 * of that customer (migration 043: to_e164 the caller, from_e164 the number called) and answered
 * per the customer's `inbound.action` (actors/customer/call-settings.ts):
 * - `forward`: `<Dial>` to the customer's own phone, showing the number called as caller ID; a
 *   forward nobody answers falls back to the message;
 * - `agent`: `<Connect><Stream>` to the media server, so the call actor runs the agent with the
 *   customer's brief, greeting the caller with the business's name;
 * - `message`: a branded `<Say>` of whom they reached and a `<Gather>` offering "press 9 to stop
 *   these calls", which records a do-not-call entry (source `callee_request`) and confirms.
 * Null: forward when the customer has a phone, else message. A number nobody rents hears a
 * generic message and nothing is recorded.
 *
 * Money: a forwarded or agent-answered call uses carrier and model minutes and costs the call
 * rate of the spec's table, like a dialled call: it takes a hold (the account's `start_call`, so
 * balance, spend caps and concurrency apply) and is settled by the call's end in the call's own
 * transaction (call-end.ts). A hold refused answers with the message instead. The message costs
 * nothing (it takes no hold). The end of every inbound call comes through the status callback
 * path (the carrier inbox, then call-end.ts), which writes its outcome and `call.completed`.
 */
import twilio from 'twilio';
import type { Deps } from '../../runtime/deps.ts';
import type { EntityRegistry } from '../../runtime/actor-system.ts';
import type { AgentSetup } from '../../telephony/speech-bridge.ts';
import type { CallRow } from '../../db/calls.ts';
import { createInboundCallRepository } from '../../db/inbound-calls.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { createDncRepository } from '../../db/dnc.ts';
import type { AccountMessage, AccountReplies } from '../account/messages.ts';
import { callSettingsOf, registeredNameOf } from '../customer/call-settings.ts';
import { TOOLS } from './agent-setup.ts';
import { decideOutcome, summarise, TIME_LIMIT_SECONDS, type CallFacts } from './outcome.ts';
import { summaryWords } from './summary-words.ts';

export type InboundAction = 'forward' | 'agent' | 'message';

/** How long the customer's phone rings before the caller hears the message instead, seconds. */
export const FORWARD_RING_SECONDS = 20;
/** How long the caller has to press a key after the opt-out offer, seconds. */
const GATHER_SECONDS = 6;
/** The lease of a held inbound call (call-keeper.ts LEASE_SECONDS). */
const LEASE_SECONDS = 30;

// ---- Words (the calling language's first part; English otherwise) ----

interface Words {
  reached: (name: string) => string;
  offer: string;
  goodbye: string;
  optedOut: (name: string) => string;
  notInService: string;
  agentGreeting: (name: string) => string;
}

const WORDS: Record<string, Words> = {
  en: {
    reached: (name) => `You have reached ${name}. Nobody can take your call right now; please try again later.`,
    offer: 'To stop these calls, press 9.',
    goodbye: 'Thank you for calling. Goodbye.',
    optedOut: (name) => `Your number has been removed. ${name} will not call you again. Goodbye.`,
    notInService: 'The number you have called is not taking calls. Goodbye.',
    agentGreeting: (name) => `Thank you for calling ${name}. How can I help you?`,
  },
  fr: {
    reached: (name) => `Vous êtes bien chez ${name}. Personne ne peut prendre votre appel pour le moment ; merci de rappeler plus tard.`,
    offer: 'Pour ne plus recevoir ces appels, appuyez sur 9.',
    goodbye: 'Merci de votre appel. Au revoir.',
    optedOut: (name) => `Votre numéro a été retiré. ${name} ne vous appellera plus. Au revoir.`,
    notInService: "Le numéro que vous avez composé ne reçoit pas d'appels. Au revoir.",
    agentGreeting: (name) => `Merci d'avoir appelé ${name}. Comment puis-je vous aider ?`,
  },
  de: {
    reached: (name) => `Sie sind verbunden mit ${name}. Im Moment kann niemand Ihren Anruf annehmen; bitte versuchen Sie es später noch einmal.`,
    offer: 'Um diese Anrufe zu beenden, drücken Sie die 9.',
    goodbye: 'Vielen Dank für Ihren Anruf. Auf Wiederhören.',
    optedOut: (name) => `Ihre Nummer wurde entfernt. ${name} wird Sie nicht mehr anrufen. Auf Wiederhören.`,
    notInService: 'Unter der gewählten Nummer werden keine Anrufe angenommen. Auf Wiederhören.',
    agentGreeting: (name) => `Vielen Dank für Ihren Anruf bei ${name}. Wie kann ich Ihnen helfen?`,
  },
  es: {
    reached: (name) => `Ha llamado a ${name}. Nadie puede atender su llamada ahora; por favor, vuelva a intentarlo más tarde.`,
    offer: 'Para dejar de recibir estas llamadas, pulse 9.',
    goodbye: 'Gracias por llamar. Adiós.',
    optedOut: (name) => `Su número ha sido eliminado. ${name} no volverá a llamarle. Adiós.`,
    notInService: 'El número al que ha llamado no recibe llamadas. Adiós.',
    agentGreeting: (name) => `Gracias por llamar a ${name}. ¿En qué puedo ayudarle?`,
  },
  nl: {
    reached: (name) => `U bent verbonden met ${name}. Er is nu niemand beschikbaar; probeert u het later nog eens.`,
    offer: 'Om deze oproepen te stoppen, druk op 9.',
    goodbye: 'Bedankt voor uw oproep. Tot ziens.',
    optedOut: (name) => `Uw nummer is verwijderd. ${name} belt u niet meer. Tot ziens.`,
    notInService: 'Het nummer dat u belt neemt geen oproepen aan. Tot ziens.',
    agentGreeting: (name) => `Bedankt voor uw oproep naar ${name}. Waarmee kan ik u helpen?`,
  },
};

/** The words in `language` (BCP 47; its first part picks them), English when it is not one of the five. */
export function inboundWords(language: string): Words {
  return WORDS[language.split('-')[0].toLowerCase()] ?? WORDS.en;
}

// ---- TwiML (pure) ----

/** What the customer's setting asks for, with the documented default (null: forward when the customer has a phone). */
export function inboundActionOf(customer: Pick<CustomerRow, 'phone' | 'call_settings'>): InboundAction {
  const wanted = callSettingsOf(customer).inbound.action ?? (customer.phone ? 'forward' : 'message');
  // A forward needs somewhere to go.
  return wanted === 'forward' && !customer.phone ? 'message' : wanted;
}

/** How long the caller has to press 9 after the offer before a forward rings the customer, seconds. */
const FORWARD_OFFER_SECONDS = 2;

/**
 * Forward to the customer's own phone; the caller ID shown is the number called. With `offer`,
 * the opt-out offer ("press 9") comes first: the voicemail message gives this number to stop the
 * calls, and 47 CFR 64.1200(b)(3) wants it to reach an automated opt-out, which a person's phone
 * is not. No key: the forward follows; a key: its action (`keyPressed`).
 */
export function forwardTwiml(c: { calledNumber: string; customerPhone: string; actionUrl: string; offer?: { language: string; optOutUrl: string } }): string {
  const response = new twilio.twiml.VoiceResponse();
  if (c.offer) {
    const gather = response.gather({ numDigits: 1, timeout: FORWARD_OFFER_SECONDS, action: c.offer.optOutUrl, method: 'POST' });
    gather.say({ language: c.offer.language as never }, inboundWords(c.offer.language).offer);
  }
  const dial = response.dial({ callerId: c.calledNumber, timeout: FORWARD_RING_SECONDS, timeLimit: TIME_LIMIT_SECONDS, action: c.actionUrl, method: 'POST' });
  dial.number(c.customerPhone);
  return response.toString();
}

/** The agent answers: the call's audio is streamed to the media server with the call's id and stream token. */
export function agentTwiml(c: { mediaUrl: string; callId: string; streamToken: string }): string {
  const response = new twilio.twiml.VoiceResponse();
  const stream = response.connect().stream({ url: c.mediaUrl });
  stream.parameter({ name: 'call_id', value: c.callId });
  stream.parameter({ name: 'stream_token', value: c.streamToken });
  return response.toString();
}

/** Whom they reached, the opt-out offer (press 9) and goodbye. */
export function messageTwiml(c: { name: string; language: string; optOutUrl: string }): string {
  const words = inboundWords(c.language);
  const language = c.language as never;
  const response = new twilio.twiml.VoiceResponse();
  response.say({ language }, words.reached(c.name));
  const gather = response.gather({ numDigits: 1, timeout: GATHER_SECONDS, action: c.optOutUrl, method: 'POST' });
  gather.say({ language }, words.offer);
  response.say({ language }, words.goodbye);
  return response.toString();
}

/** A number nobody rents: no name, no opt-out to record (no account), nothing kept. */
export function notInServiceTwiml(): string {
  const response = new twilio.twiml.VoiceResponse();
  response.say({ language: 'en-US' as never }, WORDS.en.notInService);
  response.hangup();
  return response.toString();
}

/** The answer to the opt-out keypress: confirmed and hung up, or goodbye for any other key. */
export function optOutTwiml(c: { name: string; language: string; optedOut: boolean }): string {
  const words = inboundWords(c.language);
  const response = new twilio.twiml.VoiceResponse();
  response.say({ language: c.language as never }, c.optedOut ? words.optedOut(c.name) : words.goodbye);
  response.hangup();
  return response.toString();
}

export function hangupTwiml(): string {
  const response = new twilio.twiml.VoiceResponse();
  response.hangup();
  return response.toString();
}

// ---- The agent of an inbound call ----

/**
 * The agent's brief for a call the person made: it greets the caller with the business's name,
 * helps with what they call about (the customer's certified script and research are what it
 * knows), books a meeting if they want one, and records an opt-out at once. It never names the
 * platform or any supplier.
 */
export function inboundAgentSetup(c: {
  businessName: string;
  website: string | null;
  language: string;
  timezone: string;
  caller: string;
  script?: string | null;
  researchNotes?: string | null;
}): AgentSetup {
  const greeting = inboundWords(c.language).agentGreeting(c.businessName);
  const instructions = [
    `You answer the phone for ${c.businessName}${c.website ? ` (${c.website})` : ''}. The person called ${c.businessName}; they may be calling back after a call from ${c.businessName}.`,
    `Speak ${c.language}. The call has opened with these words, played to the caller: "${greeting}" Do not repeat them; continue from their answer. Always call the business ${c.businessName}.`,
    'If asked whether you are an AI, a bot or a real person, say plainly that you are an automated assistant. Never claim or pretend to be human.',
    'If the person asks not to be called again, call mark_do_not_call immediately, confirm they will not be called again, and end the call.',
    `Help with what they call about. If they want a meeting, agree a time in ${c.timezone}, confirm it aloud, then call book_appointment.`,
    'Never pressure, never invent facts, prices or consent, and never mention any technology or company behind this call other than ' +
      `${c.businessName}. When the conversation is over, call end_call.`,
    c.researchNotes ? `What you know about ${c.businessName}: ${c.researchNotes}` : '',
    c.script ? `What ${c.businessName} offers, from its certified call script:\n${c.script}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { instructions, businessName: c.businessName, greeting, tools: TOOLS, language: c.language, to: c.caller, timezone: c.timezone };
}

// ---- The outcome of an inbound call (call-end.ts) ----

export type InboundOutcome = ReturnType<typeof decideOutcome> | 'forwarded' | 'message_played';

/**
 * How an inbound call ended. Forwarded and answered at the customer's phone: `forwarded`; the
 * message played (asked for, a hold refused, or a forward nobody answered): `message_played`,
 * `do_not_call` if the caller pressed 9; answered by the agent: as a dialled call's outcome. The
 * caller hanging up before anything answered is `completed` with its length. Pure.
 */
export function inboundOutcome(call: Pick<CallRow, 'inbound_action' | 'end_reason'>, facts: CallFacts): InboundOutcome {
  if (facts.doNotCall) return 'do_not_call';
  if (facts.carrierStatus !== 'completed') return decideOutcome(facts);
  if (call.end_reason === 'forwarded') return 'forwarded';
  if (call.inbound_action === 'message') return 'message_played';
  if (call.inbound_action === 'agent') return decideOutcome(facts);
  return 'completed';
}

/** One plain sentence for the reseller about an inbound call, in the customer's calling language (summary-words.ts). */
export function inboundSummary(
  call: Pick<CallRow, 'end_reason' | 'inbound_action'>,
  outcome: InboundOutcome,
  durationSeconds: number,
  appointment: Parameters<typeof summarise>[2],
  language?: string | null,
): string {
  const w = summaryWords(language).inbound;
  switch (outcome) {
    case 'forwarded':
      return w.forwarded(durationSeconds);
    case 'message_played':
      return call.end_reason?.startsWith('forward_') ? w.forwardUnanswered(durationSeconds) : w.messageHeard(durationSeconds);
    case 'do_not_call':
      return w.doNotCall;
    case 'completed':
      return w.completed(durationSeconds);
    default:
      return w.byAssistant(summarise(outcome, durationSeconds, appointment, language));
  }
}

/** The seconds an inbound call is billed for: the message costs nothing. */
export function inboundBilledSeconds(call: Pick<CallRow, 'inbound_action'>, durationSeconds: number): number {
  return call.inbound_action === 'message' ? 0 : durationSeconds;
}

// ---- The service the routes call ----

export interface InboundDeps extends Deps {
  /** The account actors: an answered inbound call takes a hold through `start_call`. */
  accounts: Pick<EntityRegistry<AccountMessage, AccountReplies, any>, 'ask'>;
  /**
   * This process's owner id (the dialler's) when its call keeper runs: a held inbound call is
   * leased to it (call-keeper.ts). Null in a process without the keeper.
   */
  owner: string | null;
  /** The per-call secret a media stream must bring back. */
  streamToken: (callId: string) => string;
  /** ws(s):// URL of this process's media server; empty when it runs none (then the message answers). */
  mediaUrl: () => string;
}

export interface InboundCall {
  callSid: string;
  from: string;
  to: string;
}

export function createInbound(deps: InboundDeps) {
  const { pool, clock, log, config } = deps;
  const repo = () => createInboundCallRepository(pool);
  const url = (path: string, callId: string) => `${config.publicUrl}/telephony/twilio/inbound/${path}?call_id=${callId}`;

  async function context(customerId: string): Promise<{ customer: CustomerRow; name: string; language: string }> {
    const customer = await createCustomerRepository(pool).get(customerId);
    if (!customer) throw new Error(`customer ${customerId} not found`);
    const country = await createCoverageRepository(pool).get(customer.country);
    return { customer, name: registeredNameOf(customer), language: country?.calling_language ?? 'en-US' };
  }

  function message(call: CallRow, name: string, language: string): string {
    return messageTwiml({ name, language, optOutUrl: url('opt-out', call.id) });
  }

  /** The voice webhook: records the call and answers it per the customer's setting. */
  async function answer(c: InboundCall): Promise<string> {
    const number = await repo().rentedNumber(c.to);
    if (!number) {
      log.info({ carrier_call_id: c.callSid }, 'a call to a number nobody rents heard the generic message');
      return notInServiceTwiml();
    }
    const { customer, name, language } = await context(number.customer_id);
    let action = inboundActionOf(customer);
    if (action === 'agent' && !deps.mediaUrl()) {
      log.warn({ customer_id: customer.id }, 'an inbound call for the agent reached a process without a media server; the message answers it');
      action = 'message';
    }
    const now = clock.now();
    const { row, created } = await repo().insert({
      accountId: number.account_id,
      mode: number.mode,
      customerId: customer.id,
      caller: c.from,
      called: number.e164,
      country: number.country,
      carrier: 'twilio',
      carrierCallId: c.callSid,
      action,
      now,
    });
    let call = row;
    if (created && action !== 'message') {
      const started = await deps.accounts.ask(call.account_id, { type: 'start_call', mode: call.mode, customerId: call.customer_id, reference: call.id });
      if (started.ok) {
        call = await repo().markHeld(call.id, deps.owner, LEASE_SECONDS, now);
      } else {
        log.info({ call_id: call.id, reason: started.reason }, 'an inbound call could not take a hold; the message answers it');
        await repo().setAction(call.id, 'message', `hold_refused:${started.reason}`, now);
        call = { ...call, inbound_action: 'message' };
      }
    }
    switch (call.inbound_action) {
      case 'forward':
        return forwardTwiml({ calledNumber: call.from_e164!, customerPhone: customer.phone!, actionUrl: url('dial-status', call.id), offer: { language, optOutUrl: url('opt-out', call.id) } });
      case 'agent':
        return agentTwiml({ mediaUrl: deps.mediaUrl(), callId: call.id, streamToken: deps.streamToken(call.id) });
      default:
        return message(call, name, language);
    }
  }

  /** The forward ended (Twilio's Dial action): answered, the call ends; not answered, the message. */
  async function dialEnded(callId: string, dialStatus: string): Promise<string | null> {
    const call = await repo().get(callId);
    if (!call) return null;
    const now = clock.now();
    if (dialStatus === 'completed') {
      await repo().setEndReason(call.id, 'forwarded', now);
      return hangupTwiml();
    }
    await repo().setAction(call.id, 'message', `forward_${dialStatus.replace(/[^a-z-]/g, '').slice(0, 20)}`, now);
    const { name, language } = await context(call.customer_id);
    return message(call, name, language);
  }

  /** The caller's keypress after the offer: 9 records the do-not-call entry and confirms; another key before a forward forwards. */
  async function keyPressed(callId: string, digits: string): Promise<string | null> {
    const call = await repo().get(callId);
    if (!call) return null;
    const forwarding = call.inbound_action === 'forward';
    // A caller without a number (withheld, "anonymous") has nothing to list: thanked, not confirmed.
    const optedOut = digits === '9' && /^\+[1-9]\d{6,14}$/.test(call.to_e164);
    if (optedOut) {
      await createDncRepository(pool).add({
        accountId: call.account_id,
        e164: call.to_e164,
        source: 'callee_request',
        reason: 'pressed 9 on a call back',
        callId: call.id,
        now: clock.now(),
      });
      log.info({ call_id: call.id }, 'a caller asked not to be called again');
    }
    // A 9 before a forward is not forwarded: the call is the message's (it costs nothing; its hold is released at the end).
    if (forwarding && digits === '9') await repo().setAction(call.id, 'message', optedOut ? 'opted_out' : 'opt_out_without_number', clock.now());
    const { customer, name, language } = await context(call.customer_id);
    // Another key than 9 before a forward: forwarded (a withheld caller's 9 is thanked, as at the message).
    if (forwarding && digits !== '9' && customer.phone) {
      return forwardTwiml({ calledNumber: call.from_e164!, customerPhone: customer.phone, actionUrl: url('dial-status', call.id) });
    }
    return optOutTwiml({ name, language, optedOut });
  }

  /** The call the number's status callback names (by the carrier's id), if we recorded it. */
  async function callOf(callSid: string): Promise<CallRow | null> {
    return repo().byCarrierCallId(callSid);
  }

  return { answer, dialEnded, keyPressed, callOf };
}

export type Inbound = ReturnType<typeof createInbound>;
