/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Facts, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import { consoleUrl, teamFooter, type TemplateInput } from './input.ts';
import { formatCents, number, text } from '../format.ts';

const STAGES: Record<string, { subject: string; heading: string; says: string }> = {
  below_25_percent: {
    subject: 'balance below 25 %',
    heading: 'Your balance is below 25 %',
    says: 'The available balance has fallen under a quarter of your last top-up.',
  },
  below_10_percent: {
    subject: 'balance below 10 %',
    heading: 'Your balance is below 10 %',
    says: 'The available balance has fallen under a tenth of your last top-up. Calls stop when it runs out.',
  },
  zero: {
    subject: 'no new call can start',
    heading: 'Your balance has run out',
    says: 'The available balance no longer covers one call, so no new call can start until funds are added.',
  },
};

/** `balance_low` (to the account's billing people, live only): one per stage crossed, the same facts as `balance.low`. */
export async function balanceLow(input: TemplateInput): Promise<Rendered> {
  const { platform } = input;
  const balance = input.data;
  const rates = balance.rates && typeof balance.rates === 'object' ? (balance.rates as Record<string, unknown>) : {};
  const stage = STAGES[text(balance, 'low_balance')] ?? STAGES.below_25_percent;
  const available = number(balance, 'available_cents');
  const minutes = number(rates, 'estimated_call_minutes_remaining');
  const autoTopUp = balance.auto_top_up && typeof balance.auto_top_up === 'object' ? (balance.auto_top_up as Record<string, unknown>) : null;
  const subject = `${input.accountName}: ${stage.subject}${available !== null ? ` (${formatCents(available)} available)` : ''}`;
  const rows: [string, string][] = [];
  if (available !== null) rows.push(['Available balance', formatCents(available)]);
  if (minutes !== null) rows.push(['Estimated call minutes left', String(Math.max(0, Math.floor(minutes)))]);
  const autoAmount = autoTopUp ? number(autoTopUp, 'amount_cents') : null;
  const body = (
    <Layout lang="en" title={subject} preview={`${stage.heading}. ${stage.says}`} look={platform.look} footer={teamFooter(input)}>
      <Title>{stage.heading}</Title>
      <Para>
        {stage.says} This is the live balance of <strong>{input.accountName}</strong>.
      </Para>
      {rows.length ? <Facts rows={rows} /> : null}
      {autoAmount !== null ? (
        <Para>Automatic top-up is on: {formatCents(autoAmount)} is charged to the saved card when the balance falls under its threshold.</Para>
      ) : (
        <Para>Add funds by card in the console, or turn on automatic top-up so calls never stop for want of funds.</Para>
      )}
      <CallToAction href={consoleUrl({ ...input, mode: 'live' }, 'billing')} label="Add funds" look={platform.look} fallback="Or open this address:" />
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
