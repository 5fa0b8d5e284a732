import test from 'ava';
import { summarise, type CallOutcome } from '../../actors/call/outcome.ts';
import { inboundSummary, type InboundOutcome } from '../../actors/call/inbound.ts';
import { SUMMARY_LANGUAGES, SUMMARY_WORDS, summaryLanguage, summaryWords, type EndedOutcome } from '../../actors/call/summary-words.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';

/**
 * Issue 23 §5: the call's one-sentence summary is written in the customer's calling language
 * (fr, de, es, nl by the first part of `calling_language`; English for any other), for every
 * outcome; the English sentences are the documented ones, unchanged.
 */

const OUTCOMES: CallOutcome[] = ['appointment_booked', 'not_interested', 'call_back_later', 'do_not_call', 'voicemail', 'fax', 'time_limit', 'completed', 'no_answer', 'busy', 'failed'];
const ENDED: EndedOutcome[] = ['expired', 'do_not_call_listed', 'consent_expired', 'consent_required', 'requested_call_only', 'no_redial_after_hang_up'];
const INBOUND: InboundOutcome[] = ['forwarded', 'message_played', 'do_not_call', 'completed', 'not_interested'];
const PARIS = 'Europe/Paris';
/** Thursday 3 December 2026, 14:00 in Paris. */
const THURSDAY_14_PARIS = new Date('2026-12-03T13:00:00Z');
const MEETING = { startLocal: '2026-12-03 14:00', timezone: PARIS, startAt: THURSDAY_14_PARIS };
const CALLBACK = { at: THURSDAY_14_PARIS, zone: PARIS };

/** Every sentence a summary can be in `language`, by a name. */
function everySentence(language: string): Record<string, string> {
  const all: Record<string, string> = {};
  for (const o of OUTCOMES) all[o] = summarise(o, 90, o === 'appointment_booked' ? MEETING : null, language);
  all.appointment_unknown = summarise('appointment_booked', 90, null, language);
  all.call_back_at = summarise('call_back_later', 90, null, language, CALLBACK);
  all.completed_call_back_at = summarise('completed', 40, null, language, CALLBACK);
  for (const o of ENDED) all[`ended:${o}`] = summaryWords(language).ended[o];
  all.lost = summaryWords(language).lost;
  for (const o of INBOUND) all[`inbound:${o}`] = inboundSummary({ end_reason: null, inbound_action: 'agent' }, o, 65, null, language);
  all['inbound:forward_unanswered'] = inboundSummary({ end_reason: 'forward_no_answer', inbound_action: 'forward' }, 'message_played', 65, null, language);
  return all;
}

test('the language is the first part of calling_language; English for any other or none', (t) => {
  t.is(summaryLanguage('fr-FR'), 'fr');
  t.is(summaryLanguage('fr-CA'), 'fr');
  t.is(summaryLanguage('de-DE'), 'de');
  t.is(summaryLanguage('es-ES'), 'es');
  t.is(summaryLanguage('nl-NL'), 'nl');
  t.is(summaryLanguage('en-GB'), 'en');
  t.is(summaryLanguage('it-IT'), 'en');
  t.is(summaryLanguage(null), 'en');
  t.is(summarise('busy', 0, null, 'it-IT'), 'The line was busy.');
  t.is(summarise('busy', 0, null, 'pt-BR'), summarise('busy', 0, null));
});

test('English: every sentence is the documented one, unchanged', (t) => {
  const en = everySentence('en-US');
  t.deepEqual(en, {
    appointment_booked: 'The call was answered and a meeting was booked for 2026-12-03 14:00 (Europe/Paris); it ended after 1 min 30 s.',
    not_interested: 'The call was answered; the prospect was not interested. It ended after 1 min 30 s.',
    call_back_later: 'The call was answered; the prospect asked to be called back later. It ended after 1 min 30 s.',
    do_not_call: 'The call was answered; the prospect asked not to be called again and the number was added to the do-not-call list.',
    voicemail: 'The call reached voicemail.',
    fax: 'A fax machine answered the call.',
    time_limit: 'The call was answered and ended at the 20-minute limit.',
    completed: 'The call was answered and ended after 1 min 30 s.',
    no_answer: 'Nobody answered the call.',
    busy: 'The line was busy.',
    failed: 'The call could not be connected.',
    appointment_unknown: 'The call was answered and a meeting was booked for a time agreed on the call (customer time); it ended after 1 min 30 s.',
    call_back_at: 'The call was answered; the prospect asked to be called back at 2026-12-03 14:00 (Europe/Paris). It ended after 1 min 30 s.',
    completed_call_back_at: 'The call was answered; the prospect asked to be called back at 2026-12-03 14:00 (Europe/Paris). It ended after 40 s.',
    'ended:expired': 'The request was not dialled before its deadline.',
    'ended:do_not_call_listed': 'The number is on a do-not-call list, so it was not dialled.',
    'ended:consent_expired': 'The consent sent with the request expired before it could be dialled, so it was not dialled.',
    'ended:consent_required': 'A rule in force at the time of dialling needs consent the request does not carry, so it was not dialled.',
    'ended:requested_call_only': 'The number may be called only when the called party asked for the call, and the request does not say so, so it was not dialled.',
    'ended:no_redial_after_hang_up': 'The callee hung up on an earlier call from this customer, and the law of the number forbids calling again, so it was not dialled.',
    lost: 'The call was lost before it reported an outcome; nothing was charged for it.',
    'inbound:forwarded': "A call back was forwarded to the business's phone and answered; it ended after 1 min 5 s.",
    'inbound:message_played': 'A call back heard the message; it ended after 1 min 5 s.',
    'inbound:do_not_call': 'A call back asked not to be called again; the number was added to the do-not-call list.',
    'inbound:completed': 'A call back ended after 1 min 5 s.',
    'inbound:not_interested': 'A call back was answered by the assistant. The call was answered; the prospect was not interested. It ended after 1 min 5 s.',
    'inbound:forward_unanswered': "A call back was forwarded to the business's phone, which did not answer; the caller heard the message. It ended after 1 min 5 s.",
  });
  // No language given: English, as before.
  t.is(summarise('completed', 0, null), 'The call was answered and ended.');
  t.is(summarise('appointment_booked', 180, { startLocal: '2025-03-31 10:00', timezone: 'America/New_York' }), 'The call was answered and a meeting was booked for 2025-03-31 10:00 (America/New_York); it ended after 3 min.');
});

test('French: the outcomes, the callback time and the length in French', (t) => {
  t.is(summarise('not_interested', 90, null, 'fr-FR'), "L'appel a été décroché ; le prospect n'était pas intéressé. Il s'est terminé au bout de 1 min 30 s.");
  t.is(summarise('call_back_later', 90, null, 'fr-FR'), "L'appel a été décroché ; le prospect a demandé à être rappelé plus tard. Il s'est terminé au bout de 1 min 30 s.");
  t.is(
    summarise('call_back_later', 90, null, 'fr-FR', CALLBACK),
    "L'appel a été décroché ; le prospect a demandé à être rappelé le jeudi 3 décembre 2026 à 14:00 (Europe/Paris). Il s'est terminé au bout de 1 min 30 s.",
  );
  t.is(
    summarise('appointment_booked', 180, MEETING, 'fr-FR'),
    "L'appel a été décroché et un rendez-vous a été fixé au jeudi 3 décembre 2026 à 14:00 (Europe/Paris) ; il s'est terminé au bout de 3 min.",
  );
  t.is(summarise('voicemail', 20, null, 'fr-FR'), "L'appel a abouti sur une messagerie vocale.");
  t.is(summarise('no_answer', 0, null, 'fr-FR'), "Personne n'a répondu à l'appel.");
  t.is(summarise('completed', 0, null, 'fr-FR'), "L'appel a été décroché et s'est terminé.");
  t.is(SUMMARY_WORDS.fr.ended.do_not_call_listed, "Le numéro figure sur une liste d'opposition aux appels ; il n'a donc pas été appelé.");
  t.is(SUMMARY_WORDS.fr.ended.consent_required, "Une règle en vigueur au moment de l'appel exige un consentement que la demande ne comporte pas ; le numéro n'a donc pas été appelé.");
  t.is(inboundSummary({ end_reason: null, inbound_action: 'message' }, 'message_played', 45, null, 'fr-FR'), "Lors d'un rappel, l'appelant a entendu le message ; l'appel s'est terminé au bout de 45 s.");
});

test('German: the outcomes, the callback time and the length in German', (t) => {
  t.is(summarise('not_interested', 90, null, 'de-DE'), 'Der Anruf wurde angenommen; die angerufene Person hatte kein Interesse. Er endete nach 1 Minute 30 Sekunden.');
  t.is(summarise('completed', 120, null, 'de-DE'), 'Der Anruf wurde angenommen und endete nach 2 Minuten.');
  t.is(
    summarise('completed', 61, null, 'de-DE', { at: THURSDAY_14_PARIS, zone: 'Europe/Berlin' }),
    'Der Anruf wurde angenommen; die angerufene Person bat um einen Rückruf am Donnerstag, 3. Dezember 2026 um 14:00 (Europe/Berlin). Er endete nach 1 Minute 1 Sekunde.',
  );
  t.is(summarise('do_not_call', 30, null, 'de-DE'), 'Der Anruf wurde angenommen; die angerufene Person bat darum, nicht mehr angerufen zu werden, und die Nummer wurde auf die Sperrliste gesetzt.');
  t.is(summarise('busy', 0, null, 'de-DE'), 'Die Leitung war besetzt.');
  t.is(SUMMARY_WORDS.de.ended.expired, 'Die Nummer wurde nicht vor Ablauf der Frist des Auftrags angerufen.');
  t.is(SUMMARY_WORDS.de.lost, 'Der Anruf ging verloren, bevor er ein Ergebnis meldete; dafür wurde nichts berechnet.');
});

test('Spanish and Dutch: a sentence of each, with the length and the date in the language', (t) => {
  t.is(summarise('call_back_later', 45, null, 'es-ES'), 'La llamada fue atendida; la persona pidió que se le volviera a llamar más tarde. Terminó tras 45 s.');
  t.is(
    summarise('call_back_later', 90, null, 'es-ES', { at: THURSDAY_14_PARIS, zone: 'Europe/Madrid' }),
    'La llamada fue atendida; la persona pidió que se le volviera a llamar el jueves, 3 de diciembre de 2026, 14:00 (Europe/Madrid). Terminó tras 1 min 30 s.',
  );
  t.is(summarise('not_interested', 170, null, 'nl-NL'), 'Het gesprek werd aangenomen; de gebelde persoon had geen interesse. Het eindigde na 2 min 50 sec.');
  t.is(
    summarise('appointment_booked', 60, { ...MEETING, timezone: 'Europe/Amsterdam' }, 'nl-NL'),
    'Het gesprek werd aangenomen en er werd een afspraak gemaakt voor donderdag 3 december 2026 om 14:00 (Europe/Amsterdam); het eindigde na 1 min.',
  );
});

for (const language of SUMMARY_LANGUAGES.filter((l) => l !== 'en')) {
  test(`${language}: every outcome has its own sentence in the language, one sentence's length said in its units, nothing named`, (t) => {
    const en = everySentence('en-US');
    const here = everySentence(`${language}-XX`);
    t.deepEqual(Object.keys(here), Object.keys(en));
    for (const [key, sentence] of Object.entries(here)) {
      t.not(sentence, en[key], `${language} ${key} is not the English one`);
      t.regex(sentence, /[.?!]$/, `${language} ${key} ends as a sentence`);
      t.notRegex(sentence, /\.\.$/, `${language} ${key}`);
      t.false(namesSupplier(sentence), `${language} ${key}`);
      t.notRegex(sentence, /switchboard|twilio|openai/i, `${language} ${key}`);
    }
    // Each outcome says something different.
    const outcomes = OUTCOMES.map((o) => here[o]);
    t.is(new Set(outcomes).size, outcomes.length);
    t.is(new Set(ENDED.map((o) => here[`ended:${o}`])).size, ENDED.length);
    // The real length, in the language's words.
    const length = summaryWords(language).duration(90);
    for (const key of ['not_interested', 'call_back_later', 'completed', 'call_back_at', 'appointment_booked']) t.true(here[key].includes(length), `${language} ${key}: ${length}`);
    t.true(here['inbound:not_interested'].includes(summarise('not_interested', 65, null, language)), 'the assistant answered: the outcome sentence follows');
  });
}
