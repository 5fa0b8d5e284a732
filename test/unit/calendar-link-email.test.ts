import test from 'ava';
import { composeEmail, EmailNotSendable } from '../../email/compose.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';
import { composeInput } from '../helpers/email-fixtures.ts';

/** The calendar link email (issue 24): on the reseller's behalf, in the customer's language, the link as its button. */
const LINK = 'https://calls.harbourline.example/calendar/cal_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000';
const calendarEmail = (language: string | null) =>
  composeEmail(
    composeInput('calendar_link', { customer_name: 'Bright Dental', link_id: 'l1', expires_at: '2026-12-04T10:00:00.000Z', language }, { secret: LINK }),
  );

test('in English: from the brand, the link as its button, until when it works, no supplier named', async (t) => {
  const m = await calendarEmail('en-US');
  t.is(m.subject, 'Connect the calendar of Bright Dental');
  t.regex(m.text, /books meetings for Bright Dental during calls/);
  t.true(m.html.includes(LINK));
  t.regex(m.text, /This link is personal and works until/);
  t.not(m.from.name, 'Switchboard', 'sent on the reseller\'s behalf');
  t.false(namesSupplier(m.text));
  t.notRegex(m.text + m.html, /switchboard/i);
});

test('in the customer\'s calling language: French, German', async (t) => {
  t.is((await calendarEmail('fr-FR')).subject, 'Connectez l’agenda de Bright Dental');
  t.regex((await calendarEmail('fr-FR')).html, /<html[^>]*lang="fr"/);
  t.is((await calendarEmail('de-DE')).subject, 'Verbinden Sie den Kalender von Bright Dental');
});

test('a calendar link email without its link is never sent', async (t) => {
  await t.throwsAsync(composeEmail(composeInput('calendar_link', {})), { instanceOf: EmailNotSendable });
});
