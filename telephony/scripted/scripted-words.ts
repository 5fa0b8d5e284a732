/**
 * What the scripted agent (test mode) says after the opening, in the calling language (issue 23
 * §5): en, fr, de, es, nl by the calling language's first part, English otherwise, as the opening
 * is. A machine is the machine verdict's (actors/call/call-machine.ts), so the script has no
 * voicemail line. The simulated callee's lines stay English (the post-call rules read
 * English phrases: actors/call/call-summary.ts). Pure.
 */
export interface ScriptedWords {
  notInterested: string;
  proposeMeeting: (minutes: number) => string;
  booked: string;
  noMoreCalls: string;
  callBackLater: string;
  moreToSay: (turn: number) => string;
}

const WORDS: Record<'en' | 'fr' | 'de' | 'es' | 'nl', ScriptedWords> = {
  en: {
    notInterested: 'No problem, thank you for your time. Goodbye.',
    proposeMeeting: (m) => `Could we book a ${m}-minute call on the next weekday at ten?`,
    booked: 'You are booked in. Thank you, goodbye.',
    noMoreCalls: 'Understood, we will not call you again. Goodbye.',
    callBackLater: 'Of course, we will call back later. Goodbye.',
    moreToSay: (n) => `There is more to say, part ${n}.`,
  },
  fr: {
    notInterested: 'Pas de problème, merci pour votre temps. Au revoir.',
    proposeMeeting: (m) => `Pourrions-nous prévoir un appel de ${m} minutes le prochain jour ouvré à dix heures ?`,
    booked: 'C’est noté. Merci, au revoir.',
    noMoreCalls: 'Entendu, nous ne vous appellerons plus. Au revoir.',
    callBackLater: 'Bien sûr, nous vous rappellerons plus tard. Au revoir.',
    moreToSay: (n) => `J’ai encore quelque chose à dire, partie ${n}.`,
  },
  de: {
    notInterested: 'Kein Problem, vielen Dank für Ihre Zeit. Auf Wiederhören.',
    proposeMeeting: (m) => `Können wir ein ${m}-minütiges Gespräch am nächsten Werktag um zehn Uhr vereinbaren?`,
    booked: 'Der Termin ist eingetragen. Vielen Dank, auf Wiederhören.',
    noMoreCalls: 'Verstanden, wir rufen Sie nicht mehr an. Auf Wiederhören.',
    callBackLater: 'Natürlich, wir rufen später zurück. Auf Wiederhören.',
    moreToSay: (n) => `Es gibt noch mehr zu sagen, Teil ${n}.`,
  },
  es: {
    notInterested: 'No hay problema, gracias por su tiempo. Adiós.',
    proposeMeeting: (m) => `¿Podemos reservar una llamada de ${m} minutos el próximo día laborable a las diez?`,
    booked: 'Queda reservado. Gracias, adiós.',
    noMoreCalls: 'Entendido, no le volveremos a llamar. Adiós.',
    callBackLater: 'Por supuesto, le llamaremos más tarde. Adiós.',
    moreToSay: (n) => `Hay más que decir, parte ${n}.`,
  },
  nl: {
    notInterested: 'Geen probleem, bedankt voor uw tijd. Tot ziens.',
    proposeMeeting: (m) => `Kunnen we een gesprek van ${m} minuten inplannen op de volgende werkdag om tien uur?`,
    booked: 'De afspraak staat genoteerd. Dank u, tot ziens.',
    noMoreCalls: 'Begrepen, we bellen u niet meer. Tot ziens.',
    callBackLater: 'Natuurlijk, we bellen later terug. Tot ziens.',
    moreToSay: (n) => `Er is meer te zeggen, deel ${n}.`,
  },
};

/** The scripted agent's words for a BCP 47 calling language (`fr-FR` → French). */
export function scriptedWordsFor(language: string): ScriptedWords {
  const first = language.split('-')[0]!.toLowerCase();
  return first in WORDS ? WORDS[first as keyof typeof WORDS] : WORDS.en;
}
