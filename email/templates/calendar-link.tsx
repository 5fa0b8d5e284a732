/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Layout, MailLink, Para, Title, renderParts, type Rendered } from './layout.tsx';
import type { TemplateInput } from './input.ts';
import { fill, formatDay, text } from '../format.ts';
import { emailLanguage, onboardingEmailWords } from '../onboarding-words.ts';
import { calendarEmailWords } from '../calendar-words.ts';

/**
 * `calendar_link` (to a reseller's customer, on its behalf, issue 24): the link to the page where
 * the customer connects its calendar, in the reseller's brand and the customer's calling
 * language, naming neither the service nor any supplier.
 */
export async function calendarLink(input: TemplateInput): Promise<Rendered> {
  const { data, brand } = input;
  const lang = emailLanguage(text(data, 'language'));
  const w = calendarEmailWords(lang);
  const shared = onboardingEmailWords(lang);
  const slots = { brand: brand.name, customer: text(data, 'customer_name') || brand.name };
  const expires = formatDay(text(data, 'expires_at'), lang);
  const subject = fill(w.subject, slots);
  const [before, after] = shared.questions.split('{email}');
  const footer = brand.supportEmail ? (
    <>
      {before}
      <MailLink href={`mailto:${brand.supportEmail}`} look={brand.look}>
        {brand.supportEmail}
      </MailLink>
      {after} {shared.ignore}
    </>
  ) : (
    shared.ignore
  );
  return {
    subject,
    ...(await renderParts(
      <Layout lang={lang} title={subject} preview={fill(w.preview, slots)} look={brand.look} footer={footer}>
        <Title>{fill(w.heading, slots)}</Title>
        <Para>{fill(w.intro, slots)}</Para>
        <CallToAction href={input.secret ?? ''} label={w.button} look={brand.look} fallback={shared.fallback} />
        {expires ? <Para muted>{fill(shared.expires, { date: expires })}</Para> : null}
      </Layout>,
    )),
  };
}
