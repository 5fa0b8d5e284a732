/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Facts, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import { consoleUrl, teamFooter, type TemplateInput } from './input.ts';
import { formatCents, formatDay, number, text } from '../format.ts';

/** `website_hosting_due` (billing, live): a site's hosting will not be covered at its renewal, or could not be taken. */
export async function websiteHostingDue(input: TemplateInput): Promise<Rendered> {
  const { data, platform } = input;
  const site = text(data, 'domain') || text(data, 'url') || 'a customer’s website';
  const hosting = number(data, 'hosting_cents_per_month');
  const renews = formatDay(text(data, 'hosting_renews_on'));
  const suspend = formatDay(text(data, 'suspend_due_on'));
  const subject = `${input.accountName}: hosting of ${site} is due${suspend ? `; the site goes offline on ${suspend} unless it is paid` : ''}`;
  const rows: [string, string][] = [['Website', site]];
  if (hosting !== null) rows.push(['Monthly hosting', formatCents(hosting)]);
  if (renews) rows.push(['Renews on', renews]);
  if (suspend) rows.push(['Goes offline on', suspend]);
  const body = (
    <Layout lang="en" title={subject} preview={`The balance does not cover the hosting of ${site}.`} look={platform.look} footer={teamFooter(input)}>
      <Title>A website’s hosting is due</Title>
      <Para>
        The live balance of <strong>{input.accountName}</strong> does not cover the hosting of {site}. The site keeps serving for now
        {suspend ? `; if the hosting is not paid by ${suspend}, it goes offline` : ''}.
      </Para>
      <Facts rows={rows} />
      <Para>A top-up pays the hosting at once.</Para>
      <CallToAction href={consoleUrl({ ...input, mode: 'live' }, 'billing')} label="Add funds" look={platform.look} fallback="Or open this address:" />
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
