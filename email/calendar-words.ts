import type { EmailLanguage } from './onboarding-words.ts';

/**
 * The calendar link email's own words (issue 24), in the customer's calling language; the
 * expiry, fallback, questions and ignore lines are the onboarding email's (email/onboarding-words.ts).
 * No supplier is named. Pure.
 */
export interface CalendarEmailWords {
  subject: string;
  preview: string;
  heading: string;
  intro: string;
  button: string;
}

const WORDS: Record<EmailLanguage, CalendarEmailWords> = {
  en: {
    subject: 'Connect the calendar of {customer}',
    preview: '{brand} asks you to connect the calendar of {customer}.',
    heading: 'Connect the calendar of {customer}',
    intro: '{brand} books meetings for {customer} during calls. Connect your calendar so that meetings are offered only when you are free, and each one is written to your calendar.',
    button: 'Connect your calendar',
  },
  es: {
    subject: 'Conecte el calendario de {customer}',
    preview: '{brand} le pide que conecte el calendario de {customer}.',
    heading: 'Conectar el calendario de {customer}',
    intro: '{brand} concierta citas para {customer} durante las llamadas. Conecte su calendario para que solo se ofrezcan citas cuando esté libre y cada una se anote en su calendario.',
    button: 'Conectar su calendario',
  },
  fr: {
    subject: 'Connectez l’agenda de {customer}',
    preview: '{brand} vous invite à connecter l’agenda de {customer}.',
    heading: 'Connecter l’agenda de {customer}',
    intro: '{brand} prend des rendez-vous pour {customer} pendant les appels. Connectez votre agenda pour que les rendez-vous ne soient proposés que lorsque vous êtes libre, et que chacun y soit inscrit.',
    button: 'Connecter votre agenda',
  },
  de: {
    subject: 'Verbinden Sie den Kalender von {customer}',
    preview: '{brand} bittet Sie, den Kalender von {customer} zu verbinden.',
    heading: 'Den Kalender von {customer} verbinden',
    intro: '{brand} vereinbart in Telefonaten Termine für {customer}. Verbinden Sie Ihren Kalender, damit Termine nur angeboten werden, wenn Sie frei sind, und jeder in Ihren Kalender eingetragen wird.',
    button: 'Kalender verbinden',
  },
  nl: {
    subject: 'Koppel de agenda van {customer}',
    preview: '{brand} vraagt u de agenda van {customer} te koppelen.',
    heading: 'De agenda van {customer} koppelen',
    intro: '{brand} plant tijdens gesprekken afspraken voor {customer}. Koppel uw agenda zodat afspraken alleen worden aangeboden wanneer u vrij bent, en elke afspraak in uw agenda komt.',
    button: 'Uw agenda koppelen',
  },
};

export const calendarEmailWords = (lang: EmailLanguage): CalendarEmailWords => WORDS[lang];
