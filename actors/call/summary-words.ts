/**
 * The words of a call's one-sentence `summary`, in the customer's calling language
 * (`countries.calling_language` of the customer's country; its first part picks: en, fr, de, es,
 * nl; English for any other). Every sentence a summary can be is here, in one table: the dialled
 * call's outcomes (outcome.ts `summarise`), the callback time asked for (call-summary.ts), a call
 * back (inbound.ts), a request ended before a dial (the dialler) and a lost call (call-jobs.ts).
 * The English sentences are the documented ones (docs/api.md). Nothing names the platform or a
 * supplier. Pure.
 */
import { minutesAndSeconds } from '../../runtime/types.ts';
import { localTime } from './local-time.ts';

export const SUMMARY_LANGUAGES = ['en', 'fr', 'de', 'es', 'nl'] as const;
export type SummaryLanguage = (typeof SUMMARY_LANGUAGES)[number];

/** The outcomes of a request ended before any dial. */
/**
 * How a request ended before any dial (actors/scheduler/admission.ts `Admission` of kind `end`;
 * the dialler indexes this table with it, so a new one fails to compile until it has words).
 */
export type EndedOutcome =
  | 'expired'
  | 'do_not_call_listed'
  | 'consent_expired'
  | 'consent_required'
  | 'requested_call_only'
  | 'no_redial_after_hang_up'
  | 'registered_address_required';

/** A moment said in a summary: its instant (when known) and the local wall time already written. */
export interface SummaryMoment {
  startLocal: string;
  timezone: string;
  /** The instant; without it the local wall time is written as it is ("2026-11-24 10:00"). */
  startAt?: Date;
}

export interface SummaryWords {
  /** The language's BCP 47 tag for dates (Intl). */
  locale: string;
  /** A call's real length: "1 min 30 s". */
  duration: (seconds: number) => string;
  /** An instant in `zone` as the sentence says it: "2026-12-03 14:00" in English. */
  when: (at: Date, zone: string) => string;
  // A dialled call's outcomes; `seconds` is its real length (0: no length said).
  appointmentBooked: (when: string | null, zone: string | null, seconds: number) => string;
  notInterested: (seconds: number) => string;
  callBackLater: (seconds: number) => string;
  /** A callback time asked for (`when` already in the zone): the call_back_later and completed outcomes. */
  callBackAt: (when: string, zone: string, seconds: number) => string;
  doNotCall: string;
  voicemail: string;
  fax: string;
  timeLimit: string;
  completed: (seconds: number) => string;
  noAnswer: string;
  busy: string;
  failed: string;
  /** A request ended before any dial, by outcome. */
  ended: Record<EndedOutcome, string>;
  /** A call lost with its process before it reported an outcome. */
  lost: string;
  // A call a person made to the customer's number (inbound.ts).
  inbound: {
    forwarded: (seconds: number) => string;
    forwardUnanswered: (seconds: number) => string;
    messageHeard: (seconds: number) => string;
    doNotCall: string;
    completed: (seconds: number) => string;
    /** The assistant answered: this, then the outcome's sentence. */
    byAssistant: (sentence: string) => string;
  };
}

/** Intl's spaces (narrow and no-break) as plain ones, so a sentence is the same on every machine. */
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');

/** "jeudi 3 décembre 2026 à 14:00": the date and 24-hour time of `at` in `zone`, in `locale`. */
function dateInLocale(locale: string) {
  return (at: Date, zone: string) => plain(new Intl.DateTimeFormat(locale, { timeZone: zone, dateStyle: 'full', timeStyle: 'short', hourCycle: 'h23' }).format(at));
}

/**
 * "1 min 30 s" with the language's units ("2 min" when the seconds are 0, "45 s" under a minute);
 * a unit given as [one, many] is a word said in the singular or the plural.
 */
function lengthIn(minute: string | [string, string], second: string | [string, string]) {
  const unit = (n: number, u: string | [string, string]) => `${n} ${typeof u === 'string' ? u : u[n === 1 ? 0 : 1]}`;
  return (seconds: number) => {
    const total = Math.max(0, Math.round(seconds));
    const m = Math.floor(total / 60);
    const s = total % 60;
    if (!m) return unit(s, second);
    return s ? `${unit(m, minute)} ${unit(s, second)}` : unit(m, minute);
  };
}

const EN: SummaryWords = {
  locale: 'en',
  duration: minutesAndSeconds,
  when: localTime,
  appointmentBooked: (when, zone, s) =>
    `The call was answered and a meeting was booked for ${when ?? 'a time agreed on the call'} (${zone ?? 'customer time'}); it ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
  notInterested: (s) => `The call was answered; the prospect was not interested. It ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
  callBackLater: (s) => `The call was answered; the prospect asked to be called back later. It ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
  callBackAt: (when, zone, s) => `The call was answered; the prospect asked to be called back at ${when} (${zone}). It ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
  doNotCall: 'The call was answered; the prospect asked not to be called again and the number was added to the do-not-call list.',
  // Not "no message was left": the agent may leave a short one (the scripted agent does).
  voicemail: 'The call reached voicemail.',
  fax: 'A fax machine answered the call.',
  timeLimit: 'The call was answered and ended at the 20-minute limit.',
  completed: (s) => `The call was answered and ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
  noAnswer: 'Nobody answered the call.',
  busy: 'The line was busy.',
  failed: 'The call could not be connected.',
  ended: {
    expired: 'The request was not dialled before its deadline.',
    do_not_call_listed: 'The number is on a do-not-call list, so it was not dialled.',
    consent_expired: 'The consent sent with the request expired before it could be dialled, so it was not dialled.',
    consent_required: 'A rule in force at the time of dialling needs consent the request does not carry, so it was not dialled.',
    requested_call_only: 'The number may be called only when the called party asked for the call, and the request does not say so, so it was not dialled.',
    no_redial_after_hang_up: 'The callee hung up on an earlier call from this customer, and the law of the number forbids calling again, so it was not dialled.',
    registered_address_required: 'A call to a UK number must give the business address or a freephone number, and the customer has no registered address, so it was not dialled.',
  },
  lost: 'The call was lost before it reported an outcome; nothing was charged for it.',
  inbound: {
    forwarded: (s) => `A call back was forwarded to the business's phone and answered; it ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
    forwardUnanswered: (s) => `A call back was forwarded to the business's phone, which did not answer; the caller heard the message. It ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
    messageHeard: (s) => `A call back heard the message; it ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
    doNotCall: 'A call back asked not to be called again; the number was added to the do-not-call list.',
    completed: (s) => `A call back ended${s > 0 ? ` after ${minutesAndSeconds(s)}` : ''}.`,
    byAssistant: (sentence) => `A call back was answered by the assistant. ${sentence}`,
  },
};

const frLength = lengthIn('min', 's');
const frAfter = (s: number) => (s > 0 ? ` au bout de ${frLength(s)}` : '');
const FR: SummaryWords = {
  locale: 'fr-FR',
  duration: frLength,
  when: dateInLocale('fr-FR'),
  appointmentBooked: (when, zone, s) =>
    `L'appel a été décroché et un rendez-vous a été fixé ${when ? `au ${when}` : "à une heure convenue pendant l'appel"} (${zone ?? 'heure du client'}) ; il s'est terminé${frAfter(s)}.`,
  notInterested: (s) => `L'appel a été décroché ; le prospect n'était pas intéressé. Il s'est terminé${frAfter(s)}.`,
  callBackLater: (s) => `L'appel a été décroché ; le prospect a demandé à être rappelé plus tard. Il s'est terminé${frAfter(s)}.`,
  callBackAt: (when, zone, s) => `L'appel a été décroché ; le prospect a demandé à être rappelé le ${when} (${zone}). Il s'est terminé${frAfter(s)}.`,
  doNotCall: "L'appel a été décroché ; le prospect a demandé à ne plus être appelé et le numéro a été ajouté à la liste d'opposition aux appels.",
  voicemail: "L'appel a abouti sur une messagerie vocale.",
  fax: "Un télécopieur a répondu à l'appel.",
  timeLimit: "L'appel a été décroché et s'est terminé à la limite de 20 minutes.",
  completed: (s) => `L'appel a été décroché et s'est terminé${frAfter(s)}.`,
  noAnswer: "Personne n'a répondu à l'appel.",
  busy: 'La ligne était occupée.',
  failed: "L'appel n'a pas pu être établi.",
  ended: {
    expired: "Le numéro n'a pas été appelé avant l'échéance de la demande.",
    do_not_call_listed: "Le numéro figure sur une liste d'opposition aux appels ; il n'a donc pas été appelé.",
    consent_expired: "Le consentement joint à la demande a expiré avant l'appel ; le numéro n'a donc pas été appelé.",
    consent_required: "Une règle en vigueur au moment de l'appel exige un consentement que la demande ne comporte pas ; le numéro n'a donc pas été appelé.",
    requested_call_only: "Ce numéro ne peut être appelé qu'à la demande de la personne appelée, ce que la demande n'indique pas ; il n'a donc pas été appelé.",
    no_redial_after_hang_up: "La personne appelée a raccroché lors d'un appel précédent de ce client, et la loi applicable au numéro interdit de la rappeler ; il n'a donc pas été appelé.",
    registered_address_required: "Un appel vers un numéro britannique doit donner l'adresse de l'entreprise ou un numéro gratuit, et le client n'a pas d'adresse enregistrée ; il n'a donc pas été appelé.",
  },
  lost: "L'appel a été perdu avant d'avoir indiqué son résultat ; rien n'a été facturé pour cet appel.",
  inbound: {
    forwarded: (s) => `Un rappel a été transféré vers le téléphone de l'entreprise et décroché ; il s'est terminé${frAfter(s)}.`,
    forwardUnanswered: (s) => `Un rappel a été transféré vers le téléphone de l'entreprise, qui n'a pas répondu ; l'appelant a entendu le message. Il s'est terminé${frAfter(s)}.`,
    messageHeard: (s) => `Lors d'un rappel, l'appelant a entendu le message ; l'appel s'est terminé${frAfter(s)}.`,
    doNotCall: "Lors d'un rappel, l'appelant a demandé à ne plus être appelé ; le numéro a été ajouté à la liste d'opposition aux appels.",
    completed: (s) => `Un rappel s'est terminé${frAfter(s)}.`,
    byAssistant: (sentence) => `Un rappel a été pris par l'assistant. ${sentence}`,
  },
};

// Words, not "Min."/"Sek.": a sentence ends after the length.
const deLength = lengthIn(['Minute', 'Minuten'], ['Sekunde', 'Sekunden']);
const deAfter = (s: number) => (s > 0 ? ` nach ${deLength(s)}` : '');
const DE: SummaryWords = {
  locale: 'de-DE',
  duration: deLength,
  when: dateInLocale('de-DE'),
  appointmentBooked: (when, zone, s) =>
    `Der Anruf wurde angenommen und ein Termin ${when ? `für ${when}` : 'zu einer im Gespräch vereinbarten Zeit'} (${zone ?? 'Ortszeit des Kunden'}) vereinbart; er endete${deAfter(s)}.`,
  notInterested: (s) => `Der Anruf wurde angenommen; die angerufene Person hatte kein Interesse. Er endete${deAfter(s)}.`,
  callBackLater: (s) => `Der Anruf wurde angenommen; die angerufene Person bat um einen späteren Rückruf. Er endete${deAfter(s)}.`,
  callBackAt: (when, zone, s) => `Der Anruf wurde angenommen; die angerufene Person bat um einen Rückruf am ${when} (${zone}). Er endete${deAfter(s)}.`,
  doNotCall: 'Der Anruf wurde angenommen; die angerufene Person bat darum, nicht mehr angerufen zu werden, und die Nummer wurde auf die Sperrliste gesetzt.',
  voicemail: 'Der Anruf erreichte eine Mailbox.',
  fax: 'Ein Faxgerät hat den Anruf angenommen.',
  timeLimit: 'Der Anruf wurde angenommen und endete an der Grenze von 20 Minuten.',
  completed: (s) => `Der Anruf wurde angenommen und endete${deAfter(s)}.`,
  noAnswer: 'Niemand hat den Anruf angenommen.',
  busy: 'Die Leitung war besetzt.',
  failed: 'Der Anruf konnte nicht verbunden werden.',
  ended: {
    expired: 'Die Nummer wurde nicht vor Ablauf der Frist des Auftrags angerufen.',
    do_not_call_listed: 'Die Nummer steht auf einer Sperrliste und wurde daher nicht angerufen.',
    consent_expired: 'Die mit dem Auftrag übermittelte Einwilligung ist abgelaufen, bevor angerufen werden konnte; daher wurde nicht angerufen.',
    consent_required: 'Eine zum Zeitpunkt des Anrufs geltende Regel verlangt eine Einwilligung, die der Auftrag nicht enthält; daher wurde nicht angerufen.',
    requested_call_only: 'Die Nummer darf nur angerufen werden, wenn die angerufene Person den Anruf gewünscht hat, und der Auftrag sagt das nicht; daher wurde nicht angerufen.',
    no_redial_after_hang_up: 'Die angerufene Person hat bei einem früheren Anruf dieses Kunden aufgelegt, und das Recht der Nummer verbietet einen erneuten Anruf; daher wurde nicht angerufen.',
    registered_address_required: 'Ein Anruf zu einer britischen Nummer muss die Adresse des Unternehmens oder eine kostenlose Nummer nennen, und der Kunde hat keine eingetragene Adresse; daher wurde nicht angerufen.',
  },
  lost: 'Der Anruf ging verloren, bevor er ein Ergebnis meldete; dafür wurde nichts berechnet.',
  inbound: {
    forwarded: (s) => `Ein Rückruf wurde an das Telefon des Unternehmens weitergeleitet und angenommen; er endete${deAfter(s)}.`,
    forwardUnanswered: (s) => `Ein Rückruf wurde an das Telefon des Unternehmens weitergeleitet, dort aber nicht angenommen; der Anrufer hörte die Ansage. Der Anruf endete${deAfter(s)}.`,
    messageHeard: (s) => `Bei einem Rückruf hörte der Anrufer die Ansage; der Anruf endete${deAfter(s)}.`,
    doNotCall: 'Bei einem Rückruf bat der Anrufer darum, nicht mehr angerufen zu werden; die Nummer wurde auf die Sperrliste gesetzt.',
    completed: (s) => `Ein Rückruf endete${deAfter(s)}.`,
    byAssistant: (sentence) => `Ein Rückruf wurde vom Assistenten angenommen. ${sentence}`,
  },
};

const esLength = lengthIn('min', 's');
const esAfter = (s: number) => (s > 0 ? ` tras ${esLength(s)}` : '');
const ES: SummaryWords = {
  locale: 'es-ES',
  duration: esLength,
  when: dateInLocale('es-ES'),
  appointmentBooked: (when, zone, s) =>
    `La llamada fue atendida y se concertó una reunión ${when ? `para el ${when}` : 'para una hora acordada en la llamada'} (${zone ?? 'hora del cliente'}); terminó${esAfter(s)}.`,
  notInterested: (s) => `La llamada fue atendida; la persona no estaba interesada. Terminó${esAfter(s)}.`,
  callBackLater: (s) => `La llamada fue atendida; la persona pidió que se le volviera a llamar más tarde. Terminó${esAfter(s)}.`,
  callBackAt: (when, zone, s) => `La llamada fue atendida; la persona pidió que se le volviera a llamar el ${when} (${zone}). Terminó${esAfter(s)}.`,
  doNotCall: 'La llamada fue atendida; la persona pidió no volver a ser llamada y el número se añadió a la lista de exclusión.',
  voicemail: 'La llamada llegó al buzón de voz.',
  fax: 'Un fax respondió a la llamada.',
  timeLimit: 'La llamada fue atendida y terminó al alcanzar el límite de 20 minutos.',
  completed: (s) => `La llamada fue atendida y terminó${esAfter(s)}.`,
  noAnswer: 'Nadie respondió a la llamada.',
  busy: 'La línea estaba ocupada.',
  failed: 'No se pudo establecer la llamada.',
  ended: {
    expired: 'El número no se llamó antes del plazo de la solicitud.',
    do_not_call_listed: 'El número figura en una lista de exclusión, así que no se llamó.',
    consent_expired: 'El consentimiento enviado con la solicitud caducó antes de poder llamar, así que no se llamó.',
    consent_required: 'Una norma vigente en el momento de la llamada exige un consentimiento que la solicitud no incluye, así que no se llamó.',
    requested_call_only: 'El número solo puede llamarse si la persona llamada pidió la llamada, y la solicitud no lo indica, así que no se llamó.',
    no_redial_after_hang_up: 'La persona llamada colgó en una llamada anterior de este cliente y la ley del número prohíbe volver a llamar, así que no se llamó.',
    registered_address_required: 'Una llamada a un número del Reino Unido debe dar la dirección de la empresa o un número gratuito, y el cliente no tiene dirección registrada, así que no se llamó.',
  },
  lost: 'La llamada se perdió antes de informar de su resultado; no se cobró nada por ella.',
  inbound: {
    forwarded: (s) => `Una devolución de llamada se desvió al teléfono del negocio y fue atendida; terminó${esAfter(s)}.`,
    forwardUnanswered: (s) => `Una devolución de llamada se desvió al teléfono del negocio, que no respondió; la persona escuchó el mensaje. Terminó${esAfter(s)}.`,
    messageHeard: (s) => `En una devolución de llamada, la persona escuchó el mensaje; terminó${esAfter(s)}.`,
    doNotCall: 'En una devolución de llamada, la persona pidió no volver a ser llamada; el número se añadió a la lista de exclusión.',
    completed: (s) => `Una devolución de llamada terminó${esAfter(s)}.`,
    byAssistant: (sentence) => `Una devolución de llamada fue atendida por el asistente. ${sentence}`,
  },
};

const nlLength = lengthIn('min', 'sec');
const nlAfter = (s: number) => (s > 0 ? ` na ${nlLength(s)}` : '');
const NL: SummaryWords = {
  locale: 'nl-NL',
  duration: nlLength,
  when: dateInLocale('nl-NL'),
  appointmentBooked: (when, zone, s) =>
    `Het gesprek werd aangenomen en er werd een afspraak gemaakt voor ${when ?? 'een tijd die in het gesprek is afgesproken'} (${zone ?? 'tijd van de klant'}); het eindigde${nlAfter(s)}.`,
  notInterested: (s) => `Het gesprek werd aangenomen; de gebelde persoon had geen interesse. Het eindigde${nlAfter(s)}.`,
  callBackLater: (s) => `Het gesprek werd aangenomen; de gebelde persoon vroeg om later teruggebeld te worden. Het eindigde${nlAfter(s)}.`,
  callBackAt: (when, zone, s) => `Het gesprek werd aangenomen; de gebelde persoon vroeg om teruggebeld te worden op ${when} (${zone}). Het eindigde${nlAfter(s)}.`,
  doNotCall: 'Het gesprek werd aangenomen; de gebelde persoon vroeg om niet meer gebeld te worden en het nummer is op de bel-me-niet-lijst gezet.',
  voicemail: 'Het gesprek kwam terecht op een voicemail.',
  fax: 'Een faxapparaat nam het gesprek aan.',
  timeLimit: 'Het gesprek werd aangenomen en eindigde bij de limiet van 20 minuten.',
  completed: (s) => `Het gesprek werd aangenomen en eindigde${nlAfter(s)}.`,
  noAnswer: 'Niemand nam het gesprek aan.',
  busy: 'De lijn was bezet.',
  failed: 'Het gesprek kon niet tot stand worden gebracht.',
  ended: {
    expired: 'Het nummer werd niet gebeld vóór de uiterste datum van het verzoek.',
    do_not_call_listed: 'Het nummer staat op een bel-me-niet-lijst en werd daarom niet gebeld.',
    consent_expired: 'De toestemming die met het verzoek werd meegestuurd, verliep voordat er gebeld kon worden; daarom werd niet gebeld.',
    consent_required: 'Een regel die op het moment van bellen geldt, vereist toestemming die het verzoek niet bevat; daarom werd niet gebeld.',
    requested_call_only: 'Het nummer mag alleen gebeld worden als de gebelde persoon om het gesprek heeft gevraagd, en het verzoek zegt dat niet; daarom werd niet gebeld.',
    no_redial_after_hang_up: 'De gebelde persoon hing op bij een eerder gesprek van deze klant, en de wet van het nummer verbiedt opnieuw bellen; daarom werd niet gebeld.',
    registered_address_required: 'Een oproep naar een Brits nummer moet het adres van het bedrijf of een gratis nummer noemen, en de klant heeft geen geregistreerd adres; daarom werd niet gebeld.',
  },
  lost: 'Het gesprek ging verloren voordat het een uitkomst meldde; er werd niets voor in rekening gebracht.',
  inbound: {
    forwarded: (s) => `Een terugbelgesprek werd doorgeschakeld naar de telefoon van het bedrijf en aangenomen; het eindigde${nlAfter(s)}.`,
    forwardUnanswered: (s) => `Een terugbelgesprek werd doorgeschakeld naar de telefoon van het bedrijf, die niet opnam; de beller hoorde het bericht. Het eindigde${nlAfter(s)}.`,
    messageHeard: (s) => `Bij een terugbelgesprek hoorde de beller het bericht; het eindigde${nlAfter(s)}.`,
    doNotCall: 'Bij een terugbelgesprek vroeg de beller om niet meer gebeld te worden; het nummer is op de bel-me-niet-lijst gezet.',
    completed: (s) => `Een terugbelgesprek eindigde${nlAfter(s)}.`,
    byAssistant: (sentence) => `Een terugbelgesprek werd aangenomen door de assistent. ${sentence}`,
  },
};

export const SUMMARY_WORDS: Record<SummaryLanguage, SummaryWords> = { en: EN, fr: FR, de: DE, es: ES, nl: NL };

/** The summary's language for a calling language (BCP 47; its first part picks); English for any other or none. */
export function summaryLanguage(callingLanguage: string | null | undefined): SummaryLanguage {
  const first = (callingLanguage ?? '').split('-')[0].toLowerCase();
  return (SUMMARY_LANGUAGES as readonly string[]).includes(first) ? (first as SummaryLanguage) : 'en';
}

/** The summary's words in `callingLanguage` (English for any other or none). */
export function summaryWords(callingLanguage: string | null | undefined): SummaryWords {
  return SUMMARY_WORDS[summaryLanguage(callingLanguage)];
}

/** A moment as the summary says it in `words` ("2026-11-24 10:00" in English); the local wall time as written when its instant is not known. */
export function momentIn(words: SummaryWords, moment: SummaryMoment): string {
  return moment.startAt ? words.when(moment.startAt, moment.timezone) : moment.startLocal;
}
