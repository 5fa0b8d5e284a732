/**
 * The words of a call's opening in each calling language (actors/call/opening.ts puts them in
 * order). Every phrase names the business by its registered name; none names the platform or a
 * supplier. docs/api.md ("What the agent and the assistant say") lists them. Pure.
 */

/** The calling languages the opening is written in (the first part of `calling_language`). */
export const OPENING_LANGUAGES = ['en', 'fr', 'de', 'es', 'nl'] as const;
export type OpeningLanguage = (typeof OPENING_LANGUAGES)[number];

/** The key that opts out: said in the offer and heard as a Media Streams `dtmf` digit. */
export const OPT_OUT_DIGIT = '9';

export interface OpeningWords {
  /** The language's name, in English, for the agent's instructions ("Speak French."). */
  name: string;
  identification: (registeredName: string) => string;
  /** The opt-out offer (47 CFR 64.1200(b)(3)): press 9 or say stop. */
  optOut: string;
  /** The purpose of the call, where the called jurisdiction wants it early. */
  purpose: (registeredName: string) => string;
  /** The recording and automated-assistant notice. */
  notice: string;
  /** A number that reaches the business (the caller ID), as digits grouped for speech. */
  callback: (registeredName: string, number: string) => string;
  /** The business's postal address, said to a UK number without a freephone caller ID (PECR reg. 24). */
  address: (address: string) => string;
  question: string;
}

export const OPENING_WORDS: Record<OpeningLanguage, OpeningWords> = {
  en: {
    name: 'English',
    identification: (n) => `Hello, this call is on behalf of ${n}.`,
    optOut: `To stop these calls, press ${OPT_OUT_DIGIT} or say stop.`,
    purpose: (n) => `We are calling to offer a short meeting about the services of ${n}.`,
    notice: 'I am an automated assistant, and this call is recorded.',
    callback: (n, number) => `You can reach ${n} at ${number}.`,
    address: (a) => `Our address is ${a}.`,
    question: 'Do you have a moment?',
  },
  fr: {
    name: 'French',
    identification: (n) => `Bonjour, cet appel est passé au nom de ${n}.`,
    optOut: `Pour ne plus recevoir ces appels, appuyez sur ${OPT_OUT_DIGIT} ou dites stop.`,
    purpose: (n) => `Nous vous appelons pour vous proposer un court rendez-vous au sujet des services de ${n}.`,
    notice: 'Je suis un assistant automatisé, et cet appel est enregistré.',
    callback: (n, number) => `Vous pouvez joindre ${n} au ${number}.`,
    address: (a) => `Notre adresse est ${a}.`,
    question: 'Avez-vous un instant ?',
  },
  de: {
    name: 'German',
    identification: (n) => `Guten Tag, dieser Anruf erfolgt im Auftrag von ${n}.`,
    optOut: `Um diese Anrufe zu beenden, drücken Sie die ${OPT_OUT_DIGIT} oder sagen Sie Stopp.`,
    purpose: (n) => `Wir rufen an, um Ihnen ein kurzes Gespräch über die Leistungen von ${n} anzubieten.`,
    notice: 'Ich bin ein automatischer Assistent, und dieser Anruf wird aufgezeichnet.',
    callback: (n, number) => `Sie erreichen ${n} unter ${number}.`,
    address: (a) => `Unsere Adresse lautet ${a}.`,
    question: 'Haben Sie einen Moment Zeit?',
  },
  es: {
    name: 'Spanish',
    identification: (n) => `Hola, esta llamada es en nombre de ${n}.`,
    optOut: `Para no recibir más estas llamadas, pulse ${OPT_OUT_DIGIT} o diga basta.`,
    purpose: (n) => `Le llamamos para ofrecerle una breve reunión sobre los servicios de ${n}.`,
    notice: 'Soy un asistente automatizado, y esta llamada se graba.',
    callback: (n, number) => `Puede contactar con ${n} en el ${number}.`,
    address: (a) => `Nuestra dirección es ${a}.`,
    question: '¿Tiene un momento?',
  },
  nl: {
    name: 'Dutch',
    identification: (n) => `Goedendag, dit gesprek wordt gevoerd namens ${n}.`,
    optOut: `Om deze oproepen te stoppen, druk op ${OPT_OUT_DIGIT} of zeg stop.`,
    purpose: (n) => `We bellen om u een kort gesprek aan te bieden over de diensten van ${n}.`,
    notice: 'Ik ben een geautomatiseerde assistent, en dit gesprek wordt opgenomen.',
    callback: (n, number) => `U kunt ${n} bereiken op ${number}.`,
    address: (a) => `Ons adres is ${a}.`,
    question: 'Heeft u even tijd?',
  },
};

/** The opening's language for a BCP 47 calling language (`fr-CA` → `fr`); English for any other. */
export function openingLanguageOf(callingLanguage: string): OpeningLanguage {
  const primary = callingLanguage.split('-')[0]!.toLowerCase();
  return (OPENING_LANGUAGES as readonly string[]).includes(primary) ? (primary as OpeningLanguage) : 'en';
}
