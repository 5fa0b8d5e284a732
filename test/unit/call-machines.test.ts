import test from 'ava';
import { voicemailLanguage, voicemailMessage } from '../../actors/call/voicemail.ts';
import { decideOutcome, summarise } from '../../actors/call/outcome.ts';

const base = { registeredName: 'Boulangerie Dupont SARL', optOutNumber: '+33142685300', customMessage: null };

test('the voicemail message names the registered name and the opt-out number in each calling language', (t) => {
  const expected: Record<string, RegExp> = {
    'en-US': /^Hello, this is an automated message from Boulangerie Dupont SARL\..* to stop these calls, call 01 42 68 53 00\. Goodbye\.$/,
    'fr-FR': /^Bonjour, ceci est un message automatique de Boulangerie Dupont SARL\..* ne plus recevoir ces appels, appelez le 01 42 68 53 00\. Au revoir\.$/,
    'de-DE': /^Guten Tag, dies ist eine automatische Nachricht von Boulangerie Dupont SARL\..* diese Anrufe abzubestellen, rufen Sie 01 42 68 53 00 an\. Auf Wiederhören\.$/,
    'es-ES': /^Hola, este es un mensaje automático de Boulangerie Dupont SARL\..* no recibir más estas llamadas, llame al 01 42 68 53 00\. Adiós\.$/,
    'nl-NL': /^Hallo, dit is een automatisch bericht van Boulangerie Dupont SARL\..* deze oproepen te stoppen, belt u 01 42 68 53 00\. Tot ziens\.$/,
  };
  for (const [language, pattern] of Object.entries(expected)) t.regex(voicemailMessage({ ...base, callingLanguage: language }), pattern, language);
});

test("the customer's own message is said between the name and the opt-out number; an unknown language is English", (t) => {
  const text = voicemailMessage({ ...base, customMessage: '  Nouvelle carte de viennoiseries.  ', callingLanguage: 'fr-CA' });
  t.regex(text, /Boulangerie Dupont SARL\. Nouvelle carte de viennoiseries\. Pour joindre Boulangerie Dupont SARL/);
  t.is(voicemailLanguage('it-IT'), 'en');
  t.is(voicemailLanguage('nl'), 'nl');
});

test('a fax is its own outcome; a machine verdict or the agent hearing voicemail is voicemail', (t) => {
  const facts = { carrierStatus: 'completed' as const, durationSeconds: 30, appointmentBooked: false, doNotCall: false, endReason: null, hitTimeLimit: false };
  t.is(decideOutcome({ ...facts, answeredBy: 'fax' }), 'fax');
  t.is(decideOutcome({ ...facts, answeredBy: 'human', endReason: 'fax' }), 'fax');
  for (const verdict of ['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other']) t.is(decideOutcome({ ...facts, answeredBy: verdict }), 'voicemail');
  t.is(decideOutcome({ ...facts, answeredBy: 'unknown', endReason: 'voicemail' }), 'voicemail');
  t.is(decideOutcome({ ...facts, answeredBy: 'human' }), 'completed');
  t.is(summarise('fax', 5, null), 'A fax machine answered the call.');
});

test('PECR reg. 24: a message left at a UK number from a caller ID that is not freephone gives the business address before the number', (t) => {
  const uk = { registeredName: 'Leeds Dental Ltd', optOutNumber: '+442079460958', customMessage: null, callingLanguage: 'en-GB' };
  t.is(
    voicemailMessage({ ...uk, address: '1 High Street, Leeds LS1 1AA' }),
    'Hello, this is an automated message from Leeds Dental Ltd. Leeds Dental Ltd called to speak with you and will try again another time. Our address is 1 High Street, Leeds LS1 1AA. To reach Leeds Dental Ltd, or to stop these calls, call 020 7946 0958. Goodbye.',
  );
  t.notRegex(voicemailMessage({ ...uk, address: null }), /address/, 'no address (a freephone caller ID, or outside the UK): as before');
});
