/**
 * What the scripted agent (test mode) says after the opening, in the calling language (issue 23
 * §5): en, fr, de, es, nl by the calling language's first part, English otherwise, as the opening
 * is. A machine is the machine verdict's (actors/call/call-machine.ts), so the script has no
 * voicemail line. The simulated callee's lines stay English (the post-call rules read
 * English phrases: actors/call/call-summary.ts). Pure.
 */
export interface ScriptedWords {
  notInterested: string;
  /** Proposes the slot it is about to book, `when` being that slot as said (`sayWhen`). */
  proposeMeeting: (minutes: number, when: string) => string;
  /** The slot was taken a moment ago: proposes the next one. */
  slotTaken: (when: string) => string;
  /** Confirms the slot booked. */
  booked: (when: string) => string;
  /** No slot could be booked. */
  notBooked: string;
  noMoreCalls: string;
  callBackLater: string;
  moreToSay: (turn: number) => string;
}

const WORDS: Record<'en' | 'fr' | 'de' | 'es' | 'nl', ScriptedWords> = {
  en: {
    notInterested: 'No problem, thank you for your time. Goodbye.',
    proposeMeeting: (m, when) => `Could we book a ${m}-minute call on ${when}?`,
    slotTaken: (when) => `That time has just been taken. Could we do ${when} instead?`,
    booked: (when) => `You are booked in for ${when}. Thank you, goodbye.`,
    notBooked: 'I could not book a time just now. Thank you, goodbye.',
    noMoreCalls: 'Understood, we will not call you again. Goodbye.',
    callBackLater: 'Of course, we will call back later. Goodbye.',
    moreToSay: (n) => `There is more to say, part ${n}.`,
  },
  fr: {
    notInterested: 'Pas de problème, merci pour votre temps. Au revoir.',
    proposeMeeting: (m, when) => `Pourrions-nous prévoir un appel de ${m} minutes le ${when} ?`,
    slotTaken: (when) => `Ce créneau vient d’être pris. Le ${when} vous conviendrait-il ?`,
    booked: (when) => `C’est noté pour le ${when}. Merci, au revoir.`,
    notBooked: 'Je n’ai pas pu réserver de créneau pour le moment. Merci, au revoir.',
    noMoreCalls: 'Entendu, nous ne vous appellerons plus. Au revoir.',
    callBackLater: 'Bien sûr, nous vous rappellerons plus tard. Au revoir.',
    moreToSay: (n) => `J’ai encore quelque chose à dire, partie ${n}.`,
  },
  de: {
    notInterested: 'Kein Problem, vielen Dank für Ihre Zeit. Auf Wiederhören.',
    proposeMeeting: (m, when) => `Können wir ein ${m}-minütiges Gespräch am ${when} vereinbaren?`,
    slotTaken: (when) => `Dieser Termin wurde gerade vergeben. Passt Ihnen stattdessen ${when}?`,
    booked: (when) => `Der Termin am ${when} ist eingetragen. Vielen Dank, auf Wiederhören.`,
    notBooked: 'Ich konnte gerade keinen Termin eintragen. Vielen Dank, auf Wiederhören.',
    noMoreCalls: 'Verstanden, wir rufen Sie nicht mehr an. Auf Wiederhören.',
    callBackLater: 'Natürlich, wir rufen später zurück. Auf Wiederhören.',
    moreToSay: (n) => `Es gibt noch mehr zu sagen, Teil ${n}.`,
  },
  es: {
    notInterested: 'No hay problema, gracias por su tiempo. Adiós.',
    proposeMeeting: (m, when) => `¿Podemos reservar una llamada de ${m} minutos el ${when}?`,
    slotTaken: (when) => `Esa hora se acaba de ocupar. ¿Le va bien el ${when}?`,
    booked: (when) => `Queda reservado para el ${when}. Gracias, adiós.`,
    notBooked: 'No he podido reservar una hora ahora. Gracias, adiós.',
    noMoreCalls: 'Entendido, no le volveremos a llamar. Adiós.',
    callBackLater: 'Por supuesto, le llamaremos más tarde. Adiós.',
    moreToSay: (n) => `Hay más que decir, parte ${n}.`,
  },
  nl: {
    notInterested: 'Geen probleem, bedankt voor uw tijd. Tot ziens.',
    proposeMeeting: (m, when) => `Kunnen we een gesprek van ${m} minuten inplannen op ${when}?`,
    slotTaken: (when) => `Dat tijdstip is net bezet geraakt. Kan het ook op ${when}?`,
    booked: (when) => `De afspraak op ${when} staat genoteerd. Dank u, tot ziens.`,
    notBooked: 'Ik kon nu geen afspraak inplannen. Dank u, tot ziens.',
    noMoreCalls: 'Begrepen, we bellen u niet meer. Tot ziens.',
    callBackLater: 'Natuurlijk, we bellen later terug. Tot ziens.',
    moreToSay: (n) => `Er is meer te zeggen, deel ${n}.`,
  },
};

const wordsLanguage = (language: string): keyof typeof WORDS => {
  const first = language.split('-')[0]!.toLowerCase();
  return first in WORDS ? (first as keyof typeof WORDS) : 'en';
};

/** The scripted agent's words for a BCP 47 calling language (`fr-FR` → French). */
export function scriptedWordsFor(language: string): ScriptedWords {
  return WORDS[wordsLanguage(language)];
}

/** A slot as find_free_slots and book_appointment give it (actors/call/booking.ts SlotView). */
export interface SaidSlot {
  start_at: string;
  /** The time as the agent says it (English). */
  says?: string;
  /** The zone `says` is in. */
  timezone?: string;
}

/**
 * How the scripted agent says `slot` in the calling language: in English the slot's `says` as the
 * tool gave it; in the other languages the same instant on the same clock (`timezone`, else
 * `fallbackZone`) in their words, "mardi 1 décembre 2026 à 10:00 (Europe/Paris)".
 */
export function sayWhen(language: string, slot: SaidSlot, fallbackZone: string): string {
  const lang = wordsLanguage(language);
  if (lang === 'en' && slot.says) return slot.says;
  const at = new Date(slot.start_at);
  const options: Intl.DateTimeFormatOptions = { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
  for (const zone of [slot.timezone, fallbackZone]) {
    if (!zone) continue;
    try {
      return `${new Intl.DateTimeFormat(lang === 'en' ? 'en-GB' : language, { ...options, timeZone: zone }).format(at)} (${zone})`;
    } catch {
      // An unknown zone: the next one.
    }
  }
  return slot.says ?? slot.start_at;
}
