/**
 * The onboarding link email's words, in the customer's calling language (the languages the
 * onboarding page speaks: en, es, fr, de, nl; English for any other). Plain text: `{slot}`s take
 * the reseller's words as given (brand, customer, support address), React escapes them. Pure.
 */
export type EmailLanguage = 'en' | 'es' | 'fr' | 'de' | 'nl';

export interface OnboardingEmailWords {
  subject: string;
  preview: string;
  heading: string;
  intro: string;
  button: string;
  expires: string;
  fallback: string;
  questions: string;
  ignore: string;
}

const NBSP = '\u00a0';

const WORDS: Record<EmailLanguage, OnboardingEmailWords> = {
  en: {
    subject: 'Please accept the calling terms for {customer}',
    preview: '{brand} asks you to accept the calling terms for {customer}.',
    heading: 'Calling terms for {customer}',
    intro: '{brand} will make calls on behalf of {customer}. Before the first call, please read and accept the calling terms.',
    button: 'Read and accept the terms',
    expires: 'This link is personal and works until {date}.',
    fallback: 'If the button does not work, open this address:',
    questions: 'Questions? Write to {email}.',
    ignore: 'If you did not expect this email, you can ignore it.',
  },
  es: {
    subject: 'Acepte las condiciones de llamada para {customer}',
    preview: '{brand} le pide que acepte las condiciones de llamada para {customer}.',
    heading: 'Condiciones de llamada para {customer}',
    intro: '{brand} realizará llamadas en nombre de {customer}. Antes de la primera llamada, lea y acepte las condiciones de llamada.',
    button: 'Leer y aceptar las condiciones',
    expires: 'Este enlace es personal y es válido hasta el {date}.',
    fallback: 'Si el botón no funciona, abra esta dirección:',
    questions: '¿Preguntas? Escriba a {email}.',
    ignore: 'Si no esperaba este correo, puede ignorarlo.',
  },
  fr: {
    subject: 'Veuillez accepter les conditions d’appel pour {customer}',
    preview: '{brand} vous invite à accepter les conditions d’appel pour {customer}.',
    heading: 'Conditions d’appel pour {customer}',
    intro: '{brand} passera des appels pour le compte de {customer}. Avant le premier appel, veuillez lire et accepter les conditions d’appel.',
    button: 'Lire et accepter les conditions',
    expires: 'Ce lien est personnel et reste valable jusqu’au {date}.',
    fallback: `Si le bouton ne fonctionne pas, ouvrez cette adresse${NBSP}:`,
    questions: `Des questions${NBSP}? Écrivez à {email}.`,
    ignore: 'Si vous n’attendiez pas cet e-mail, vous pouvez l’ignorer.',
  },
  de: {
    subject: 'Bitte nehmen Sie die Bedingungen für Anrufe für {customer} an',
    preview: '{brand} bittet Sie, die Bedingungen für Anrufe für {customer} anzunehmen.',
    heading: 'Bedingungen für Anrufe für {customer}',
    intro: '{brand} wird im Auftrag von {customer} Anrufe tätigen. Bitte lesen und akzeptieren Sie vor dem ersten Anruf die Bedingungen für Anrufe.',
    button: 'Bedingungen lesen und annehmen',
    expires: 'Dieser Link ist persönlich und gilt bis zum {date}.',
    fallback: 'Falls die Schaltfläche nicht funktioniert, öffnen Sie diese Adresse:',
    questions: 'Fragen? Schreiben Sie an {email}.',
    ignore: 'Wenn Sie diese E-Mail nicht erwartet haben, können Sie sie ignorieren.',
  },
  nl: {
    subject: 'Accepteer de belvoorwaarden voor {customer}',
    preview: '{brand} vraagt u de belvoorwaarden voor {customer} te accepteren.',
    heading: 'Belvoorwaarden voor {customer}',
    intro: '{brand} gaat namens {customer} bellen. Lees en accepteer vóór het eerste gesprek de belvoorwaarden.',
    button: 'Voorwaarden lezen en accepteren',
    expires: 'Deze link is persoonlijk en geldig tot {date}.',
    fallback: 'Werkt de knop niet? Open dan dit adres:',
    questions: 'Vragen? Schrijf naar {email}.',
    ignore: 'Hebt u deze e-mail niet verwacht? Dan kunt u hem negeren.',
  },
};

/** The language of a calling language tag (`fr-FR`, `de`, `pt-BR`): one of ours, else English. */
export function emailLanguage(tag: string | null | undefined): EmailLanguage {
  const base = (tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return (Object.keys(WORDS) as EmailLanguage[]).includes(base as EmailLanguage) ? (base as EmailLanguage) : 'en';
}

export const onboardingEmailWords = (lang: EmailLanguage): OnboardingEmailWords => WORDS[lang];
