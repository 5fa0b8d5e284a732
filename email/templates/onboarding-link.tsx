/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Layout, MailLink, Para, Title, renderParts, type Rendered } from './layout.tsx';
import type { TemplateInput } from './input.ts';
import { fill, formatDay, text } from '../format.ts';
import { emailLanguage, onboardingEmailWords } from '../onboarding-words.ts';

/**
 * `onboarding_link` (to a reseller's customer, on its behalf): in the reseller's brand and the
 * customer's calling language, naming neither the service nor any supplier.
 */
export async function onboardingLink(input: TemplateInput): Promise<Rendered> {
  const { data, brand } = input;
  const lang = emailLanguage(text(data, 'language'));
  const w = onboardingEmailWords(lang);
  const slots = { brand: brand.name, customer: text(data, 'customer_name') || brand.name };
  const expires = formatDay(text(data, 'expires_at'), lang);
  const subject = fill(w.subject, slots);
  const [questionsBefore, questionsAfter] = w.questions.split('{email}');
  const body = (
    <Layout
      lang={lang}
      title={subject}
      preview={fill(w.preview, slots)}
      look={brand.look}
      footer={
        brand.supportEmail ? (
          <>
            {questionsBefore}
            <MailLink href={`mailto:${brand.supportEmail}`} look={brand.look}>
              {brand.supportEmail}
            </MailLink>
            {questionsAfter} {w.ignore}
          </>
        ) : (
          w.ignore
        )
      }
    >
      <Title>{fill(w.heading, slots)}</Title>
      <Para>{fill(w.intro, slots)}</Para>
      <CallToAction href={input.secret ?? ''} label={w.button} look={brand.look} fallback={w.fallback} />
      {expires ? <Para muted>{fill(w.expires, { date: expires })}</Para> : null}
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
