/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Facts, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import { consoleUrl, teamFooter, type TemplateInput } from './input.ts';
import { formatCents, formatMoment, number, text } from '../format.ts';

const REASONS: Record<string, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  authentication_required: 'The bank asks for the card holder to confirm the payment, which an automatic charge cannot do.',
};

/** `auto_top_up_failed` (to the account's billing people): the charge of the saved card failed; no new attempt for 24 h. */
export async function autoTopUpFailed(input: TemplateInput): Promise<Rendered> {
  const { data, platform } = input;
  const amount = number(data, 'amount_cents');
  const threshold = number(data, 'threshold_cents');
  const code = text(data, 'code');
  const reason = text(data, 'message') || REASONS[code] || 'The card could not be charged.';
  const brand = text(data, 'card_brand');
  const last4 = text(data, 'card_last4');
  const retry = formatMoment(text(data, 'retry_after'));
  const subject = `${input.accountName}: automatic top-up${amount !== null ? ` of ${formatCents(amount)}` : ''} failed`;
  const rows: [string, string][] = [];
  if (amount !== null) rows.push(['Amount', formatCents(amount)]);
  if (brand || last4) rows.push(['Card', `${brand ? brand.charAt(0).toUpperCase() + brand.slice(1) : 'Card'}${last4 ? ` ending ${last4}` : ''}`]);
  rows.push(['Reason', reason]);
  if (threshold !== null) rows.push(['Threshold', formatCents(threshold)]);
  const body = (
    <Layout lang="en" title={subject} preview={`The saved card was not charged: ${reason}`} look={platform.look} footer={teamFooter(input)}>
      <Title>Automatic top-up failed</Title>
      <Para>
        We tried to add funds to <strong>{input.accountName}</strong> by charging the saved card, and the charge failed. No money was taken and no funds were added.
      </Para>
      <Facts rows={rows} />
      <Para>
        {retry ? `Automatic top-up tries again no earlier than ${retry}. ` : 'Automatic top-up tries again in 24 hours at the earliest. '}
        Until then, calls stop when the balance runs out. Add funds now, or save another card.
      </Para>
      <CallToAction href={consoleUrl({ ...input, mode: 'live' }, 'billing')} label="Open billing" look={platform.look} fallback="Or open this address:" />
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
