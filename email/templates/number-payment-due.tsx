/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Facts, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import { consoleUrl, teamFooter, type TemplateInput } from './input.ts';
import { formatCents, formatDay, number, text } from '../format.ts';

/** `number_payment_due` (billing, live): a number's rent will not be covered (three days before), or could not be taken (the countdown). */
export async function numberPaymentDue(input: TemplateInput): Promise<Rendered> {
  const { data, platform } = input;
  const phone = text(data, 'phone_number', 'a number');
  const rent = number(data, 'monthly_cents');
  const renews = formatDay(text(data, 'renews_on'));
  const release = formatDay(text(data, 'release_due_on'));
  const subject = release ? `${input.accountName}: ${phone} will be released on ${release} unless its rent is paid` : `${input.accountName}: the rent of ${phone} is due${renews ? ` on ${renews}` : ''}`;
  const rows: [string, string][] = [['Number', phone]];
  if (rent !== null) rows.push(['Monthly rent', formatCents(rent)]);
  if (renews) rows.push(['Renews on', renews]);
  if (release) rows.push(['Released on', release]);
  const body = (
    <Layout lang="en" title={subject} preview={release ? `The rent of ${phone} could not be taken.` : `The balance will not cover the rent of ${phone}.`} look={platform.look} footer={teamFooter(input)}>
      <Title>{release ? 'A number’s rent could not be taken' : 'A number’s rent is due soon'}</Title>
      {release ? (
        <Para>
          The live balance of <strong>{input.accountName}</strong> did not cover the rent of {phone}. The number still works; if the rent is not paid by {release}, it is released
          and cannot be got back.
        </Para>
      ) : (
        <Para>
          The live balance of <strong>{input.accountName}</strong>, less the calls running, will not cover the rent of {phone}
          {renews ? ` due on ${renews}` : ''}.
        </Para>
      )}
      <Facts rows={rows} />
      <Para>A top-up pays the rent at once.</Para>
      <CallToAction href={consoleUrl({ ...input, mode: 'live' }, 'billing')} label="Add funds" look={platform.look} fallback="Or open this address:" />
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
