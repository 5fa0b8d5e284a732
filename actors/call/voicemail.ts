/**
 * The message a call leaves on an answering machine (issue 23 §3), in the calling language (en,
 * fr, de, es, nl: `calling_language`'s first part; English for any other). It always names the
 * business by its registered name and gives an opt-out number, the caller ID: a number that
 * reaches the business's inbound line, which offers the opt-out (47 CFR 64.1200(b)(3): a message
 * left on voicemail must carry such a number). The customer's own `voicemail.message` is said
 * between the two; without one, a short default says why the business called. Pure.
 */
import { nationalFormat } from '../shared/phone.ts';
import { OPENING_WORDS } from './opening-words.ts';

export type VoicemailLanguage = 'en' | 'fr' | 'de' | 'es' | 'nl';

interface Words {
  from: (name: string) => string;
  fallback: (name: string) => string;
  optOut: (name: string, number: string) => string;
}

const WORDS: Record<VoicemailLanguage, Words> = {
  en: {
    from: (name) => `Hello, this is an automated message from ${name}.`,
    fallback: (name) => `${name} called to speak with you and will try again another time.`,
    optOut: (name, number) => `To reach ${name}, or to stop these calls, call ${number}. Goodbye.`,
  },
  fr: {
    from: (name) => `Bonjour, ceci est un message automatique de ${name}.`,
    fallback: (name) => `${name} a essayé de vous joindre et rappellera une autre fois.`,
    optOut: (name, number) => `Pour joindre ${name}, ou ne plus recevoir ces appels, appelez le ${number}. Au revoir.`,
  },
  de: {
    from: (name) => `Guten Tag, dies ist eine automatische Nachricht von ${name}.`,
    fallback: (name) => `${name} wollte Sie sprechen und versucht es ein anderes Mal wieder.`,
    optOut: (name, number) => `Um ${name} zu erreichen oder diese Anrufe abzubestellen, rufen Sie ${number} an. Auf Wiederhören.`,
  },
  es: {
    from: (name) => `Hola, este es un mensaje automático de ${name}.`,
    fallback: (name) => `${name} ha intentado hablar con usted y volverá a llamar en otro momento.`,
    optOut: (name, number) => `Para hablar con ${name}, o para no recibir más estas llamadas, llame al ${number}. Adiós.`,
  },
  nl: {
    from: (name) => `Hallo, dit is een automatisch bericht van ${name}.`,
    fallback: (name) => `${name} wilde u spreken en probeert het een andere keer opnieuw.`,
    optOut: (name, number) => `Om ${name} te bereiken, of om deze oproepen te stoppen, belt u ${number}. Tot ziens.`,
  },
};

/** The message's language: the calling language's first part when it is one of ours, else English. */
export function voicemailLanguage(callingLanguage: string): VoicemailLanguage {
  const first = callingLanguage.toLowerCase().split(/[-_]/)[0] ?? '';
  return (Object.hasOwn(WORDS, first) ? first : 'en') as VoicemailLanguage;
}

/** The words left on the machine. */
export function voicemailMessage(m: {
  /** `registeredNameOf(customer)`. */
  registeredName: string;
  /** The caller ID (E.164): it reaches the business's inbound line, which offers the opt-out. */
  optOutNumber: string;
  /** The customer's own message (`voicemail.message`), null for the default. */
  customMessage: string | null;
  callingLanguage: string;
  /**
   * The business's address, said before the number when a UK number is called from a caller ID
   * that is not freephone (PECR reg. 24(1)(b), as in the opening: `pecrReg24Rule`); else null.
   */
  address?: string | null;
}): string {
  const language = voicemailLanguage(m.callingLanguage);
  const w = WORDS[language];
  const middle = m.customMessage?.trim() || w.fallback(m.registeredName);
  const address = m.address?.trim() ? [OPENING_WORDS[language].address(m.address.trim())] : [];
  return [w.from(m.registeredName), middle, ...address, w.optOut(m.registeredName, nationalFormat(m.optOutNumber))].join(' ');
}
