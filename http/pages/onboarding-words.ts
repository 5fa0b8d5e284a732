import { pageLanguage, type PageLanguage } from '../../actors/websites/copy.ts';

/**
 * The onboarding page's words in the customer's calling language (issue 20 §4): the five
 * languages customers' sites have words for (actors/websites/copy.ts), English for any other.
 * Templates are trusted HTML; `{name}`-style slots take values escaped by the caller, and the
 * reseller's own words (brand, business and customer names) go in as given.
 */
export interface OnboardingWords {
  title: string;
  heading: string;
  intro: string;
  terms: [string, string, string, string, string];
  nameLabel: string;
  agree: string;
  submit: string;
  alreadyTitle: string;
  alreadyText: string;
  replacedTitle: string;
  replacedHeading: string;
  replacedText: string;
  expiredTitle: string;
  expiredHeading: string;
  expiredText: string;
  almostHeading: string;
  almostText: string;
  goBack: string;
  thanksTitle: string;
  thanksHeading: string;
  thanksText: string;
}

const NBSP = '\u00a0';

const WORDS: Record<PageLanguage, OnboardingWords> = {
  en: {
    title: 'Calling terms',
    heading: 'Calling terms for {business}',
    intro: 'By accepting, you confirm on behalf of <strong>{business}</strong> that:',
    terms: [
      "{brand} may place outbound sales calls to businesses on {business}'s behalf, using an AI voice agent that says it is an AI when asked;",
      "calls are made only within the legal calling hours of the called number's country, and numbers on do-not-call lists are never called;",
      'anyone who asks not to be called again is added to the do-not-call list at once;',
      'calls may be recorded and transcribed, and the recording is disclosed where the law requires it;',
      'you are authorised to accept these terms for {business}.',
    ],
    nameLabel: 'Your full name',
    agree: 'I accept these terms for {business}',
    submit: 'Accept the terms',
    alreadyTitle: 'Already accepted',
    alreadyText: 'These terms were accepted by {name} on {date}. There is nothing more to do.',
    replacedTitle: 'Link replaced',
    replacedHeading: 'This link has been replaced',
    replacedText: 'A newer link was sent for {customer}. Use the most recent link from {brand}, or ask them for a new one.',
    expiredTitle: 'Link expired',
    expiredHeading: 'This link has expired',
    expiredText: 'Onboarding links last 30 days. Ask {brand} to send you a new one.',
    almostHeading: 'Almost there',
    almostText: 'Type your full name (up to {max} characters) and tick the box to accept.',
    goBack: 'Go back',
    thanksTitle: 'Thank you',
    thanksHeading: 'Thank you, {name}',
    thanksText: 'The calling terms are accepted for {business}. You can close this page.',
  },
  de: {
    title: 'Bedingungen für Anrufe',
    heading: 'Bedingungen für Anrufe im Auftrag von {business}',
    intro: 'Mit Ihrer Zustimmung bestätigen Sie im Namen von <strong>{business}</strong>, dass:',
    terms: [
      '{brand} im Auftrag von {business} Verkaufsanrufe bei Unternehmen tätigen darf, mit einem KI-Sprachassistenten, der auf Nachfrage sagt, dass er eine KI ist;',
      'Anrufe nur zu den gesetzlich erlaubten Zeiten im Land der angerufenen Nummer erfolgen und Nummern auf Sperrlisten nie angerufen werden;',
      'jede Person, die keine weiteren Anrufe wünscht, sofort auf die Sperrliste gesetzt wird;',
      'Anrufe aufgezeichnet und transkribiert werden können und die Aufzeichnung angekündigt wird, wo das Gesetz es verlangt;',
      'Sie berechtigt sind, diese Bedingungen für {business} anzunehmen.',
    ],
    nameLabel: 'Ihr vollständiger Name',
    agree: 'Ich nehme diese Bedingungen für {business} an',
    submit: 'Bedingungen annehmen',
    alreadyTitle: 'Bereits angenommen',
    alreadyText: 'Diese Bedingungen wurden am {date} von {name} angenommen. Es ist nichts weiter zu tun.',
    replacedTitle: 'Link ersetzt',
    replacedHeading: 'Dieser Link wurde ersetzt',
    replacedText: 'Für {customer} wurde ein neuerer Link verschickt. Verwenden Sie den neuesten Link von {brand} oder bitten Sie um einen neuen.',
    expiredTitle: 'Link abgelaufen',
    expiredHeading: 'Dieser Link ist abgelaufen',
    expiredText: 'Onboarding-Links gelten 30 Tage. Bitten Sie {brand}, Ihnen einen neuen zu senden.',
    almostHeading: 'Fast geschafft',
    almostText: 'Geben Sie Ihren vollständigen Namen ein (bis zu {max} Zeichen) und setzen Sie das Häkchen, um zuzustimmen.',
    goBack: 'Zurück',
    thanksTitle: 'Vielen Dank',
    thanksHeading: 'Vielen Dank, {name}',
    thanksText: 'Die Bedingungen für Anrufe sind für {business} angenommen. Sie können diese Seite schließen.',
  },
  fr: {
    title: 'Conditions d’appel',
    heading: 'Conditions d’appel pour {business}',
    intro: `En acceptant, vous confirmez au nom de <strong>{business}</strong> que${NBSP}:`,
    terms: [
      `{brand} peut passer des appels de prospection vers des entreprises pour le compte de {business}, au moyen d’un agent vocal IA qui dit être une IA lorsqu’on le lui demande${NBSP};`,
      `les appels ne sont passés qu’aux heures autorisées par la loi du pays du numéro appelé, et les numéros inscrits sur une liste d’opposition ne sont jamais appelés${NBSP};`,
      `toute personne qui demande à ne plus être appelée est ajoutée immédiatement à la liste d’opposition${NBSP};`,
      `les appels peuvent être enregistrés et transcrits, et l’enregistrement est annoncé lorsque la loi l’exige${NBSP};`,
      'vous êtes habilité(e) à accepter ces conditions pour {business}.',
    ],
    nameLabel: 'Votre nom complet',
    agree: 'J’accepte ces conditions pour {business}',
    submit: 'Accepter les conditions',
    alreadyTitle: 'Déjà acceptées',
    alreadyText: 'Ces conditions ont été acceptées par {name} le {date}. Il n’y a plus rien à faire.',
    replacedTitle: 'Lien remplacé',
    replacedHeading: 'Ce lien a été remplacé',
    replacedText: 'Un lien plus récent a été envoyé pour {customer}. Utilisez le dernier lien de {brand} ou demandez-en un nouveau.',
    expiredTitle: 'Lien expiré',
    expiredHeading: 'Ce lien a expiré',
    expiredText: 'Les liens d’inscription sont valables 30 jours. Demandez à {brand} de vous en envoyer un nouveau.',
    almostHeading: 'Presque terminé',
    almostText: 'Saisissez votre nom complet ({max} caractères au plus) et cochez la case pour accepter.',
    goBack: 'Retour',
    thanksTitle: 'Merci',
    thanksHeading: 'Merci, {name}',
    thanksText: 'Les conditions d’appel sont acceptées pour {business}. Vous pouvez fermer cette page.',
  },
  es: {
    title: 'Condiciones de llamada',
    heading: 'Condiciones de llamada para {business}',
    intro: 'Al aceptar, confirma en nombre de <strong>{business}</strong> que:',
    terms: [
      '{brand} puede realizar llamadas comerciales a empresas en nombre de {business}, con un agente de voz de IA que dice que es una IA cuando se le pregunta;',
      'las llamadas se hacen solo dentro del horario legal del país del número llamado, y nunca se llama a números inscritos en listas de exclusión;',
      'quien pida no volver a ser llamado se añade de inmediato a la lista de exclusión;',
      'las llamadas pueden grabarse y transcribirse, y la grabación se anuncia cuando la ley lo exige;',
      'está autorizado para aceptar estas condiciones en nombre de {business}.',
    ],
    nameLabel: 'Su nombre completo',
    agree: 'Acepto estas condiciones para {business}',
    submit: 'Aceptar las condiciones',
    alreadyTitle: 'Ya aceptadas',
    alreadyText: '{name} aceptó estas condiciones el {date}. No hay nada más que hacer.',
    replacedTitle: 'Enlace sustituido',
    replacedHeading: 'Este enlace ha sido sustituido',
    replacedText: 'Se envió un enlace más reciente para {customer}. Use el último enlace de {brand} o pida uno nuevo.',
    expiredTitle: 'Enlace caducado',
    expiredHeading: 'Este enlace ha caducado',
    expiredText: 'Los enlaces de alta son válidos 30 días. Pida a {brand} que le envíe uno nuevo.',
    almostHeading: 'Casi listo',
    almostText: 'Escriba su nombre completo (hasta {max} caracteres) y marque la casilla para aceptar.',
    goBack: 'Volver',
    thanksTitle: 'Gracias',
    thanksHeading: 'Gracias, {name}',
    thanksText: 'Las condiciones de llamada están aceptadas para {business}. Puede cerrar esta página.',
  },
  nl: {
    title: 'Belvoorwaarden',
    heading: 'Belvoorwaarden voor {business}',
    intro: 'Door te accepteren bevestigt u namens <strong>{business}</strong> dat:',
    terms: [
      '{brand} namens {business} verkoopgesprekken met bedrijven mag voeren, met een AI-spraakagent die zegt dat hij een AI is als daarnaar gevraagd wordt;',
      'er alleen wordt gebeld binnen de wettelijke beltijden van het land van het gebelde nummer, en nummers op een bel-me-niet-lijst nooit worden gebeld;',
      'iedereen die vraagt niet meer gebeld te worden, direct op de bel-me-niet-lijst wordt gezet;',
      'gesprekken kunnen worden opgenomen en uitgeschreven, en de opname wordt gemeld waar de wet dat vereist;',
      'u bevoegd bent deze voorwaarden voor {business} te accepteren.',
    ],
    nameLabel: 'Uw volledige naam',
    agree: 'Ik accepteer deze voorwaarden voor {business}',
    submit: 'Voorwaarden accepteren',
    alreadyTitle: 'Al geaccepteerd',
    alreadyText: 'Deze voorwaarden zijn op {date} geaccepteerd door {name}. U hoeft niets meer te doen.',
    replacedTitle: 'Link vervangen',
    replacedHeading: 'Deze link is vervangen',
    replacedText: 'Er is een nieuwere link verstuurd voor {customer}. Gebruik de nieuwste link van {brand}, of vraag om een nieuwe.',
    expiredTitle: 'Link verlopen',
    expiredHeading: 'Deze link is verlopen',
    expiredText: 'Onboardinglinks zijn 30 dagen geldig. Vraag {brand} om u een nieuwe te sturen.',
    almostHeading: 'Bijna klaar',
    almostText: 'Vul uw volledige naam in (maximaal {max} tekens) en vink het vakje aan om te accepteren.',
    goBack: 'Terug',
    thanksTitle: 'Dank u',
    thanksHeading: 'Dank u, {name}',
    thanksText: 'De belvoorwaarden zijn geaccepteerd voor {business}. U kunt deze pagina sluiten.',
  },
};

/** The page language and words for a calling language (a locale such as `fr-FR`; null: English). */
export function onboardingWords(locale: string | null): { lang: PageLanguage; words: OnboardingWords } {
  const lang = pageLanguage(locale ?? 'en');
  return { lang, words: WORDS[lang] };
}

/** A template with its slots filled by already-escaped HTML. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (slot, name: string) => (name in values ? String(values[name]) : slot));
}
