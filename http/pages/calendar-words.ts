import { pageLanguage, type PageLanguage } from '../../actors/websites/copy.ts';

/**
 * The calendar page's words in the customer's calling language (issue 24), as the onboarding
 * page's (onboarding-words.ts): the five languages customers' sites have words for, English for
 * any other. Templates are trusted HTML; `{slot}` values are escaped by the caller. No supplier
 * is named: Google Calendar and Microsoft 365 are the customer's own calendar choices.
 */
export interface CalendarWords {
  title: string;
  heading: string;
  intro: string;
  testNote: string;
  testButton: string;
  testCalendar: string;
  google: string;
  microsoft: string;
  otherHeading: string;
  otherHelp: string;
  addressLabel: string;
  addressHint: string;
  userLabel: string;
  passwordLabel: string;
  passwordHint: string;
  connectButton: string;
  connectedHeading: string;
  connectedText: string;
  replaceText: string;
  failingText: string;
  errorHeading: string;
  missingFields: string;
  /** Too many connection attempts on this link in an hour. */
  tooManyAttempts: string;
  /** The address typed is not an http(s) address. */
  addressForm: string;
  deniedText: string;
  openAgain: string;
  replacedTitle: string;
  replacedText: string;
  expiredTitle: string;
  expiredText: string;
  /** On the onboarding page's done state, when the reseller asked for the calendar step and it is not done. */
  nextStep: string;
  nextLink: string;
}

const WORDS: Record<PageLanguage, CalendarWords> = {
  en: {
    title: 'Connect your calendar',
    heading: 'Connect the calendar of {business}',
    intro: '{brand} books meetings for {business} during calls. Connect your calendar so that meetings are offered only when you are free, and every meeting is written to your calendar.',
    testNote: 'This is a test account: test mode uses a simulated calendar, never your real one.',
    testButton: 'Connect the test calendar',
    testCalendar: 'Test calendar',
    google: 'Connect Google Calendar',
    microsoft: 'Connect Microsoft 365',
    otherHeading: 'Other calendar (iCloud, Fastmail, Nextcloud…)',
    otherHelp: "Most calendars share their events through a standard address (often called a CalDAV address). Your calendar's settings or help pages give it, and let you make an app password for it: use that rather than your usual password.",
    addressLabel: "Calendar's address",
    addressHint: 'For example https://caldav.icloud.com/ or the address your provider gives',
    userLabel: 'User name',
    passwordLabel: 'App password',
    passwordHint: 'Kept encrypted, used only to read your free times and write the meetings booked for you.',
    connectButton: 'Connect this calendar',
    connectedHeading: 'Your calendar is connected',
    connectedText: 'Connected: <strong>{label}</strong>. Meetings booked during calls are checked against it and written to it.',
    replaceText: 'To use another calendar instead, connect it below; it replaces this one.',
    failingText: 'The connection to <strong>{label}</strong> stopped working: {reason}. Connect it again below.',
    errorHeading: 'The calendar could not be connected',
    missingFields: "Fill in the calendar's address, your user name and the app password.",
    tooManyAttempts: 'Too many attempts on this link. Wait an hour and try again.',
    addressForm: "The calendar's address starts with https:// (or http://), for example https://caldav.icloud.com/.",
    deniedText: 'Access was not given, so nothing was connected.',
    openAgain: 'To try again, open your calendar link again.',
    replacedTitle: 'This link has been replaced',
    replacedText: 'A newer calendar link was sent for {customer}. Use the most recent link from {brand}, or ask them for a new one.',
    expiredTitle: 'This link has expired',
    expiredText: 'Calendar links last 7 days. Ask {brand} to send you a new one.',
    nextStep: 'One more step: connect your calendar, so that meetings are booked only when you are free.',
    nextLink: 'Connect your calendar',
  },
  de: {
    title: 'Kalender verbinden',
    heading: 'Den Kalender von {business} verbinden',
    intro: '{brand} vereinbart in Telefonaten Termine für {business}. Verbinden Sie Ihren Kalender, damit Termine nur angeboten werden, wenn Sie frei sind, und jeder Termin in Ihren Kalender eingetragen wird.',
    testNote: 'Dies ist ein Testkonto: Im Testmodus wird ein simulierter Kalender verwendet, nie Ihr echter.',
    testButton: 'Testkalender verbinden',
    testCalendar: 'Testkalender',
    google: 'Google Kalender verbinden',
    microsoft: 'Microsoft 365 verbinden',
    otherHeading: 'Anderer Kalender (iCloud, Fastmail, Nextcloud…)',
    otherHelp: 'Die meisten Kalender teilen ihre Termine über eine Standardadresse (oft CalDAV-Adresse genannt). Sie finden sie in den Einstellungen oder der Hilfe Ihres Kalenders, ebenso wie ein App-Passwort dafür: Verwenden Sie dieses statt Ihres üblichen Passworts.',
    addressLabel: 'Adresse des Kalenders',
    addressHint: 'Zum Beispiel https://caldav.icloud.com/ oder die Adresse Ihres Anbieters',
    userLabel: 'Benutzername',
    passwordLabel: 'App-Passwort',
    passwordHint: 'Verschlüsselt gespeichert und nur genutzt, um Ihre freien Zeiten zu lesen und die für Sie vereinbarten Termine einzutragen.',
    connectButton: 'Diesen Kalender verbinden',
    connectedHeading: 'Ihr Kalender ist verbunden',
    connectedText: 'Verbunden: <strong>{label}</strong>. Termine aus Telefonaten werden damit abgeglichen und dort eingetragen.',
    replaceText: 'Um stattdessen einen anderen Kalender zu nutzen, verbinden Sie ihn unten; er ersetzt diesen.',
    failingText: 'Die Verbindung zu <strong>{label}</strong> funktioniert nicht mehr: {reason}. Verbinden Sie ihn unten erneut.',
    errorHeading: 'Der Kalender konnte nicht verbunden werden',
    missingFields: 'Geben Sie die Adresse des Kalenders, Ihren Benutzernamen und das App-Passwort ein.',
    tooManyAttempts: 'Zu viele Versuche über diesen Link. Warten Sie eine Stunde und versuchen Sie es erneut.',
    addressForm: 'Die Adresse des Kalenders beginnt mit https:// (oder http://), zum Beispiel https://caldav.icloud.com/.',
    deniedText: 'Der Zugriff wurde nicht erlaubt, daher wurde nichts verbunden.',
    openAgain: 'Um es erneut zu versuchen, öffnen Sie Ihren Kalender-Link noch einmal.',
    replacedTitle: 'Dieser Link wurde ersetzt',
    replacedText: 'Für {customer} wurde ein neuerer Kalender-Link gesendet. Verwenden Sie den neuesten Link von {brand} oder bitten Sie um einen neuen.',
    expiredTitle: 'Dieser Link ist abgelaufen',
    expiredText: 'Kalender-Links gelten 7 Tage. Bitten Sie {brand} um einen neuen.',
    nextStep: 'Noch ein Schritt: Verbinden Sie Ihren Kalender, damit Termine nur vereinbart werden, wenn Sie frei sind.',
    nextLink: 'Kalender verbinden',
  },
  fr: {
    title: 'Connecter votre agenda',
    heading: "Connecter l'agenda de {business}",
    intro: "{brand} prend des rendez-vous pour {business} pendant les appels. Connectez votre agenda pour que les rendez-vous ne soient proposés que lorsque vous êtes libre, et que chaque rendez-vous y soit inscrit.",
    testNote: "Ceci est un compte de test\u00a0: le mode test utilise un agenda simulé, jamais votre véritable agenda.",
    testButton: "Connecter l'agenda de test",
    testCalendar: 'Agenda de test',
    google: 'Connecter Google Agenda',
    microsoft: 'Connecter Microsoft 365',
    otherHeading: 'Autre agenda (iCloud, Fastmail, Nextcloud…)',
    otherHelp: "La plupart des agendas partagent leurs événements par une adresse standard (souvent appelée adresse CalDAV). Les réglages ou l'aide de votre agenda la donnent, et permettent de créer un mot de passe d'application\u00a0: utilisez-le plutôt que votre mot de passe habituel.",
    addressLabel: "Adresse de l'agenda",
    addressHint: 'Par exemple https://caldav.icloud.com/ ou l’adresse donnée par votre fournisseur',
    userLabel: "Nom d'utilisateur",
    passwordLabel: "Mot de passe d'application",
    passwordHint: 'Conservé chiffré, utilisé seulement pour lire vos disponibilités et inscrire les rendez-vous pris pour vous.',
    connectButton: 'Connecter cet agenda',
    connectedHeading: 'Votre agenda est connecté',
    connectedText: 'Connecté\u00a0: <strong>{label}</strong>. Les rendez-vous pris pendant les appels sont vérifiés avec lui et y sont inscrits.',
    replaceText: 'Pour utiliser un autre agenda, connectez-le ci-dessous\u00a0; il remplace celui-ci.',
    failingText: 'La connexion à <strong>{label}</strong> ne fonctionne plus\u00a0: {reason}. Connectez-le de nouveau ci-dessous.',
    errorHeading: "L'agenda n'a pas pu être connecté",
    missingFields: "Indiquez l'adresse de l'agenda, votre nom d'utilisateur et le mot de passe d'application.",
    tooManyAttempts: 'Trop de tentatives avec ce lien. Attendez une heure puis réessayez.',
    addressForm: "L'adresse de l'agenda commence par https:// (ou http://), par exemple https://caldav.icloud.com/.",
    deniedText: "L'accès n'a pas été accordé\u00a0: rien n'a été connecté.",
    openAgain: 'Pour réessayer, ouvrez de nouveau votre lien d’agenda.',
    replacedTitle: 'Ce lien a été remplacé',
    replacedText: 'Un lien d’agenda plus récent a été envoyé pour {customer}. Utilisez le dernier lien de {brand}, ou demandez-en un nouveau.',
    expiredTitle: 'Ce lien a expiré',
    expiredText: 'Les liens d’agenda sont valables 7 jours. Demandez-en un nouveau à {brand}.',
    nextStep: 'Encore une étape\u00a0: connectez votre agenda, pour que les rendez-vous ne soient pris que lorsque vous êtes libre.',
    nextLink: 'Connecter votre agenda',
  },
  es: {
    title: 'Conectar su calendario',
    heading: 'Conectar el calendario de {business}',
    intro: '{brand} concierta citas para {business} durante las llamadas. Conecte su calendario para que solo se ofrezcan citas cuando esté libre y cada cita se anote en su calendario.',
    testNote: 'Esta es una cuenta de prueba: el modo de prueba usa un calendario simulado, nunca el real.',
    testButton: 'Conectar el calendario de prueba',
    testCalendar: 'Calendario de prueba',
    google: 'Conectar Google Calendar',
    microsoft: 'Conectar Microsoft 365',
    otherHeading: 'Otro calendario (iCloud, Fastmail, Nextcloud…)',
    otherHelp: 'La mayoría de los calendarios comparten sus eventos mediante una dirección estándar (a menudo llamada dirección CalDAV). La configuración o la ayuda de su calendario se la indica y le permite crear una contraseña de aplicación: úsela en lugar de su contraseña habitual.',
    addressLabel: 'Dirección del calendario',
    addressHint: 'Por ejemplo https://caldav.icloud.com/ o la dirección que le dé su proveedor',
    userLabel: 'Nombre de usuario',
    passwordLabel: 'Contraseña de aplicación',
    passwordHint: 'Se guarda cifrada y solo se usa para leer sus horas libres y anotar las citas concertadas para usted.',
    connectButton: 'Conectar este calendario',
    connectedHeading: 'Su calendario está conectado',
    connectedText: 'Conectado: <strong>{label}</strong>. Las citas concertadas en las llamadas se comprueban con él y se anotan en él.',
    replaceText: 'Para usar otro calendario, conéctelo abajo; sustituirá a este.',
    failingText: 'La conexión con <strong>{label}</strong> dejó de funcionar: {reason}. Vuelva a conectarlo abajo.',
    errorHeading: 'No se pudo conectar el calendario',
    missingFields: 'Indique la dirección del calendario, su nombre de usuario y la contraseña de aplicación.',
    tooManyAttempts: 'Demasiados intentos con este enlace. Espere una hora y vuelva a intentarlo.',
    addressForm: 'La dirección del calendario empieza por https:// (o http://), por ejemplo https://caldav.icloud.com/.',
    deniedText: 'No se concedió el acceso, así que no se conectó nada.',
    openAgain: 'Para intentarlo de nuevo, vuelva a abrir su enlace de calendario.',
    replacedTitle: 'Este enlace ha sido sustituido',
    replacedText: 'Se envió un enlace de calendario más reciente para {customer}. Use el enlace más reciente de {brand} o pídale uno nuevo.',
    expiredTitle: 'Este enlace ha caducado',
    expiredText: 'Los enlaces de calendario duran 7 días. Pida a {brand} uno nuevo.',
    nextStep: 'Un paso más: conecte su calendario para que las citas solo se concierten cuando esté libre.',
    nextLink: 'Conectar su calendario',
  },
  nl: {
    title: 'Uw agenda koppelen',
    heading: 'De agenda van {business} koppelen',
    intro: '{brand} plant tijdens gesprekken afspraken voor {business}. Koppel uw agenda zodat afspraken alleen worden aangeboden wanneer u vrij bent, en elke afspraak in uw agenda komt.',
    testNote: 'Dit is een testaccount: de testmodus gebruikt een gesimuleerde agenda, nooit uw echte.',
    testButton: 'De testagenda koppelen',
    testCalendar: 'Testagenda',
    google: 'Google Agenda koppelen',
    microsoft: 'Microsoft 365 koppelen',
    otherHeading: 'Andere agenda (iCloud, Fastmail, Nextcloud…)',
    otherHelp: 'De meeste agenda’s delen hun afspraken via een standaardadres (vaak CalDAV-adres genoemd). De instellingen of de hulp van uw agenda geven het, en laten u er een app-wachtwoord voor maken: gebruik dat in plaats van uw gewone wachtwoord.',
    addressLabel: 'Adres van de agenda',
    addressHint: 'Bijvoorbeeld https://caldav.icloud.com/ of het adres dat uw aanbieder geeft',
    userLabel: 'Gebruikersnaam',
    passwordLabel: 'App-wachtwoord',
    passwordHint: 'Versleuteld bewaard en alleen gebruikt om uw vrije tijden te lezen en de voor u geplande afspraken in te schrijven.',
    connectButton: 'Deze agenda koppelen',
    connectedHeading: 'Uw agenda is gekoppeld',
    connectedText: 'Gekoppeld: <strong>{label}</strong>. Afspraken uit gesprekken worden ermee vergeleken en erin gezet.',
    replaceText: 'Wilt u een andere agenda gebruiken, koppel die dan hieronder; die vervangt deze.',
    failingText: 'De koppeling met <strong>{label}</strong> werkt niet meer: {reason}. Koppel hem hieronder opnieuw.',
    errorHeading: 'De agenda kon niet worden gekoppeld',
    missingFields: 'Vul het adres van de agenda, uw gebruikersnaam en het app-wachtwoord in.',
    tooManyAttempts: 'Te veel pogingen met deze link. Wacht een uur en probeer het opnieuw.',
    addressForm: 'Het adres van de agenda begint met https:// (of http://), bijvoorbeeld https://caldav.icloud.com/.',
    deniedText: 'Er is geen toegang gegeven, dus er is niets gekoppeld.',
    openAgain: 'Open uw agendalink opnieuw om het nog eens te proberen.',
    replacedTitle: 'Deze link is vervangen',
    replacedText: 'Er is een nieuwere agendalink gestuurd voor {customer}. Gebruik de nieuwste link van {brand}, of vraag om een nieuwe.',
    expiredTitle: 'Deze link is verlopen',
    expiredText: 'Agendalinks zijn 7 dagen geldig. Vraag {brand} om een nieuwe.',
    nextStep: 'Nog één stap: koppel uw agenda, zodat afspraken alleen worden gepland wanneer u vrij bent.',
    nextLink: 'Uw agenda koppelen',
  },
};

/**
 * The calendars' reasons (calendars/failures.ts and the address check), in the page's language:
 * keyed by the English reason. A reason not listed (a server's status) is shown as it is.
 */
const REASONS: Record<Exclude<PageLanguage, 'en'>, Record<string, string>> = {
  de: {
    'the calendar server refused the user name or password': 'der Kalenderserver hat den Benutzernamen oder das Passwort abgelehnt',
    'access to the calendar was withdrawn': 'der Zugriff auf den Kalender wurde entzogen',
    'the calendar was not found (it may have been deleted)': 'der Kalender wurde nicht gefunden (vielleicht wurde er gelöscht)',
    'the calendar server could not be reached': 'der Kalenderserver war nicht erreichbar',
    'the calendar could not be reached': 'der Kalender war nicht erreichbar',
    "the calendar's address must be one reachable over the internet": 'die Adresse des Kalenders muss über das Internet erreichbar sein',
  },
  fr: {
    'the calendar server refused the user name or password': "le serveur d'agenda a refusé le nom d'utilisateur ou le mot de passe",
    'access to the calendar was withdrawn': "l'accès à l'agenda a été retiré",
    'the calendar was not found (it may have been deleted)': "l'agenda est introuvable (il a peut-être été supprimé)",
    'the calendar server could not be reached': "le serveur d'agenda n'a pas pu être joint",
    'the calendar could not be reached': "l'agenda n'a pas pu être joint",
    "the calendar's address must be one reachable over the internet": "l'adresse de l'agenda doit être accessible par Internet",
  },
  es: {
    'the calendar server refused the user name or password': 'el servidor del calendario rechazó el nombre de usuario o la contraseña',
    'access to the calendar was withdrawn': 'se retiró el acceso al calendario',
    'the calendar was not found (it may have been deleted)': 'no se encontró el calendario (puede que se haya eliminado)',
    'the calendar server could not be reached': 'no se pudo contactar con el servidor del calendario',
    'the calendar could not be reached': 'no se pudo contactar con el calendario',
    "the calendar's address must be one reachable over the internet": 'la dirección del calendario debe ser accesible por internet',
  },
  nl: {
    'the calendar server refused the user name or password': 'de agendaserver heeft de gebruikersnaam of het wachtwoord geweigerd',
    'access to the calendar was withdrawn': 'de toegang tot de agenda is ingetrokken',
    'the calendar was not found (it may have been deleted)': 'de agenda is niet gevonden (misschien is hij verwijderd)',
    'the calendar server could not be reached': 'de agendaserver was niet bereikbaar',
    'the calendar could not be reached': 'de agenda was niet bereikbaar',
    "the calendar's address must be one reachable over the internet": 'het adres van de agenda moet via internet bereikbaar zijn',
  },
};

/** A calendar's reason (English, as the calendars give it) in the page's language, with the case and full stop it came with. */
export function localReason(lang: PageLanguage, reason: string): string {
  if (lang === 'en') return reason;
  const bare = reason.trim().replace(/\.+$/, '');
  const key = `${bare.charAt(0).toLowerCase()}${bare.slice(1)}`;
  // The address check adds the technical detail in parentheses: the customer's language without it.
  const words = REASONS[lang][key] ?? REASONS[lang][key.replace(/ \(.*\)$/, '')];
  if (!words) return reason;
  const cased = bare.charAt(0) === bare.charAt(0).toUpperCase() ? `${words.charAt(0).toUpperCase()}${words.slice(1)}` : words;
  return reason.trim().endsWith('.') ? `${cased}.` : cased;
}

/** The page language and words for a calling language (a locale such as `fr-FR`; null: English). */
export function calendarWords(locale: string | null): { lang: PageLanguage; words: CalendarWords } {
  const lang = pageLanguage(locale ?? 'en');
  return { lang, words: WORDS[lang] };
}
