import test from 'ava';
import { ScriptedBridge } from '../../telephony/scripted/scripted-bridge.ts';
import type { AgentSetup } from '../../telephony/speech-bridge.ts';

/**
 * The scripted agent (test mode) speaks the customer's calling language after the opening
 * (issue 23 §5: "Today a French customer's test call is English"): what the callee hears from the
 * agent is in en, fr, de, es or nl by the calling language's first part, English otherwise.
 */
/** The slots the booking tools answer with (as actors/call/booking.ts gives them): Tuesday 1 December 2026 10:00 and 11:30 in Paris. */
const TEN = { start_at: '2026-12-01T09:00:00.000Z', end_at: '2026-12-01T09:30:00.000Z', says: 'Tuesday 1 December 2026, 10:00 (Europe/Paris)', timezone: 'Europe/Paris' };
const HALF_PAST_ELEVEN = { start_at: '2026-12-01T10:30:00.000Z', end_at: '2026-12-01T11:00:00.000Z', says: 'Tuesday 1 December 2026, 11:30 (Europe/Paris)', timezone: 'Europe/Paris' };

/** What the booking tools answer: the 10:00 slot offered; `taken`: another call took it a moment ago, 11:30 offered next. */
async function booking(name: string, args: Record<string, unknown>, taken: boolean): Promise<unknown> {
  if (name === 'find_free_slots') return { slots: [TEN, HALF_PAST_ELEVEN], timezone: 'Europe/Paris' };
  if (name === 'book_appointment') {
    if (taken && args.start_at === TEN.start_at) return { booked: false, reason: 'slot_taken', next_slots: [HALF_PAST_ELEVEN] };
    return { booked: true, appointment_id: 'apt_1', start_at: args.start_at };
  }
  return { ok: true };
}

async function agentLines(language: string, to: string, opts: { taken?: boolean; tools?: (name: string, args: Record<string, unknown>) => Promise<unknown> } = {}): Promise<string[]> {
  const lines: string[] = [];
  const setup: AgentSetup = { instructions: '', businessName: 'Boulangerie Éclair', greeting: 'Bonjour', tools: [], language, to, timezone: 'Europe/Paris' };
  let ended!: () => void;
  const done = new Promise<void>((r) => (ended = r));
  const connection = await new ScriptedBridge({ stepDelayMs: 0 }).connect(setup, {
    onAudio: () => {},
    onInterrupted: () => {},
    onToolCall: async (name, args) => {
      if (name === 'end_call') ended();
      return (opts.tools ?? ((n, a) => booking(n, a, opts.taken ?? false)))(name, args);
    },
    onTranscript: (role, text) => void (role === 'agent' && lines.push(text)),
    onError: () => {},
  });
  connection.takeOver();
  await done;
  connection.close();
  return lines;
}

test('a French call: the agent answers in French after the opening', async (t) => {
  t.deepEqual(await agentLines('fr-FR', '+33145670000'), ['Pas de problème, merci pour votre temps. Au revoir.']);
  t.deepEqual(await agentLines('fr-FR', '+33145670001'), [
    'Pourrions-nous prévoir un appel de 30 minutes le mardi 1 décembre 2026 à 10:00 (Europe/Paris) ?',
    'C’est noté pour le mardi 1 décembre 2026 à 10:00 (Europe/Paris). Merci, au revoir.',
  ]);
  t.deepEqual(await agentLines('fr-FR', '+33145670005'), ['Entendu, nous ne vous appellerons plus. Au revoir.']);
  t.deepEqual(await agentLines('fr-FR', '+33145670008'), ['Bien sûr, nous vous rappellerons plus tard. Au revoir.']);
});

test('German, Spanish and Dutch calls hear their language; English and unknown languages hear English', async (t) => {
  t.deepEqual(await agentLines('de-DE', '+4930123450'), ['Kein Problem, vielen Dank für Ihre Zeit. Auf Wiederhören.']);
  t.deepEqual(await agentLines('es-ES', '+34911234560'), ['No hay problema, gracias por su tiempo. Adiós.']);
  t.deepEqual(await agentLines('nl-NL', '+31201234560'), ['Geen probleem, bedankt voor uw tijd. Tot ziens.']);
  t.deepEqual(await agentLines('en-GB', '+442071234560'), ['No problem, thank you for your time. Goodbye.']);
  t.deepEqual(await agentLines('it-IT', '+390612345670'), ['No problem, thank you for your time. Goodbye.']);
});

test('the agent says the slot it books, as the tool gave it: the one offered, or the next when it was just taken', async (t) => {
  t.deepEqual(await agentLines('en-GB', '+442071234561'), [
    'Could we book a 30-minute call on Tuesday 1 December 2026, 10:00 (Europe/Paris)?',
    'You are booked in for Tuesday 1 December 2026, 10:00 (Europe/Paris). Thank you, goodbye.',
  ]);
  t.deepEqual(await agentLines('en-US', '+442071234561', { taken: true }), [
    'Could we book a 30-minute call on Tuesday 1 December 2026, 10:00 (Europe/Paris)?',
    'That time has just been taken. Could we do Tuesday 1 December 2026, 11:30 (Europe/Paris) instead?',
    'You are booked in for Tuesday 1 December 2026, 11:30 (Europe/Paris). Thank you, goodbye.',
  ]);
  t.deepEqual(await agentLines('fr-FR', '+33145670001', { taken: true }), [
    'Pourrions-nous prévoir un appel de 30 minutes le mardi 1 décembre 2026 à 10:00 (Europe/Paris) ?',
    'Ce créneau vient d’être pris. Le mardi 1 décembre 2026 à 11:30 (Europe/Paris) vous conviendrait-il ?',
    'C’est noté pour le mardi 1 décembre 2026 à 11:30 (Europe/Paris). Merci, au revoir.',
  ]);
  t.deepEqual(await agentLines('de-DE', '+4930123451'), [
    'Können wir ein 30-minütiges Gespräch am Dienstag, 1. Dezember 2026 um 10:00 (Europe/Paris) vereinbaren?',
    'Der Termin am Dienstag, 1. Dezember 2026 um 10:00 (Europe/Paris) ist eingetragen. Vielen Dank, auf Wiederhören.',
  ]);
  t.deepEqual(await agentLines('es-ES', '+34911234561'), [
    '¿Podemos reservar una llamada de 30 minutos el martes, 1 de diciembre de 2026, 10:00 (Europe/Paris)?',
    'Queda reservado para el martes, 1 de diciembre de 2026, 10:00 (Europe/Paris). Gracias, adiós.',
  ]);
  t.deepEqual(await agentLines('nl-NL', '+31201234561'), [
    'Kunnen we een gesprek van 30 minuten inplannen op dinsdag 1 december 2026 om 10:00 (Europe/Paris)?',
    'De afspraak op dinsdag 1 december 2026 om 10:00 (Europe/Paris) staat genoteerd. Dank u, tot ziens.',
  ]);
});

test("in the callee's own zone when the tool said it there: the French words follow the slot's timezone", async (t) => {
  const montreal = { start_at: '2026-12-01T15:00:00.000Z', end_at: '2026-12-01T15:30:00.000Z', says: 'Tuesday 1 December 2026, 10:00 your time (America/Toronto)', timezone: 'America/Toronto' };
  const tools = async (name: string) => (name === 'find_free_slots' ? { slots: [montreal] } : name === 'book_appointment' ? { booked: true } : { ok: true });
  t.deepEqual(await agentLines('fr-CA', '+15145550101', { tools }), [
    'Pourrions-nous prévoir un appel de 30 minutes le mardi 1 décembre 2026 à 10 h 00 (America/Toronto) ?',
    'C’est noté pour le mardi 1 décembre 2026 à 10 h 00 (America/Toronto). Merci, au revoir.',
  ]);
});

test('a booking refused every time: the agent does not say the meeting is booked', async (t) => {
  const tools = async (name: string) => (name === 'find_free_slots' ? { slots: [TEN] } : name === 'book_appointment' ? { booked: false, reason: 'calendar_unavailable', next_slots: [] } : { ok: true });
  t.deepEqual(await agentLines('en-GB', '+442071234561', { tools }), [
    'Could we book a 30-minute call on Tuesday 1 December 2026, 10:00 (Europe/Paris)?',
    'I could not book a time just now. Thank you, goodbye.',
  ]);
});
