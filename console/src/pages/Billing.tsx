import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, apiUrl } from '../api.ts';
import { useMode, useSetMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Field, Select } from '../ui/Form.tsx';
import { CustomerSelect } from '../ui/CustomerSelect.tsx';
import { Facts, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { AddFunds, AutoTopUpPanel, CardPaymentsList, SavedCardPanel, setupKey, SETUP_PATH } from '../ui/CardPayments.tsx';
import { ListTable } from '../ui/Table.tsx';
import { dayToIso, useAddressFilters } from '../ui/data.ts';
import { dateTime, money, words } from '../ui/format.ts';
import type { ActivityEntry, Balance, LedgerEntry, Mode, PaymentsSetup } from '../types.ts';

const TYPES = ['usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired', 'top_up_refund'];
const ACTIVITY_WORDS: Record<string, string> = { call_start_refused: 'Call start refused', hold_released: 'Hold released', auto_top_up_failed: 'Automatic top-up failed' };
const REASON_WORDS: Record<string, string> = {
  insufficient_balance: 'Not enough balance for the hold',
  daily_spend_cap_reached: 'Daily spend cap reached',
  monthly_spend_cap_reached: 'Monthly spend cap reached',
  concurrency_limit: 'Too many calls at once',
  platform_at_capacity: 'The platform was at capacity',
  call_never_reported_back: 'The call never reported back',
  card_declined: 'The card was declined',
  insufficient_funds: 'The card has insufficient funds',
  expired_card: 'The card has expired',
  authentication_required: 'The card needs its holder to authenticate the payment',
};

/**
 * The processor's cancel address (`/console/billing?mode=…&top_up=canceled`) names the mode the
 * payment was in and that it was canceled: the console switches to that mode, says so once, and
 * takes both out of the address (the ledger's filters live there too).
 */
function useReturnFromCheckout(mode: Mode): 'canceled' | null {
  const [params, setParams] = useSearchParams();
  const setMode = useSetMode();
  const client = useQueryClient();
  const [outcome] = useState(() => (params.get('top_up') === 'canceled' ? ('canceled' as const) : null));
  useEffect(() => {
    const wanted = params.get('mode');
    if (wanted !== 'live' && wanted !== 'test' && !params.has('top_up')) return;
    if ((wanted === 'live' || wanted === 'test') && wanted !== mode) {
      setMode(wanted);
      void client.invalidateQueries();
    }
    const next = new URLSearchParams(params);
    next.delete('mode');
    next.delete('top_up');
    setParams(next, { replace: true });
    // Once, on arrival.
  }, []);
  return outcome;
}

/**
 * Balance, adding funds by card (the bonus it earns, the saved card, automatic top-up), the card
 * payments with their receipts, the ledger with filters and its CSV per customer, and the activity
 * log of refused starts and released holds.
 */
export default function Billing() {
  const mode = useMode();
  const returned = useReturnFromCheckout(mode);
  const { get: filter, set } = useAddressFilters();
  const balance = useQuery({ queryKey: ['/billing/balance', mode], queryFn: () => api.get<Balance>('/billing/balance', { mode }) });
  const setup = useQuery({ queryKey: setupKey(mode), queryFn: () => api.get<PaymentsSetup>(SETUP_PATH, { mode }) });
  const query = { mode, customer_id: filter('customer_id'), type: filter('type'), from: dayToIso(filter('from')), to: dayToIso(filter('to'), true) };
  return (
    <>
      <PageHeader title="Billing" description="Your balance, adding funds by card, and every movement of your balance." />
      {returned === 'canceled' && <Notice tone="warn">The top-up was canceled: nothing was charged and your balance is unchanged.</Notice>}
      <Section title="Balance" id="balance">
        <QueryState query={balance}>
          {(balance) => (
            <Facts
              items={[
                ['Available now', <strong key="a">{money(balance.available_cents)}</strong>],
                ['Balance', money(balance.balance_cents)],
                ['Held for running calls', money(balance.reserved_cents)],
                ['Paid', money(balance.paid_cents)],
                ['Bonus', `${money(balance.bonus_cents)}${balance.bonus_expires_at ? ` (expires ${dateTime(balance.bonus_expires_at)})` : ''}`],
                ['Calls cost', `${money(balance.rates.call_cents_per_minute)} a minute`],
                ['Minutes this month', balance.rates.minutes_used_this_month],
              ]}
            />
          )}
        </QueryState>
      </Section>
      <Section title="Add funds" id="add-funds">
        <QueryState query={setup} what="Loading card payments">
          {(setup) => <AddFunds setup={setup} mode={mode} />}
        </QueryState>
      </Section>
      <div className="split split-sections">
        <Section title="Saved card" id="saved-card">
          <QueryState query={setup} what="Loading the saved card">
            {(setup) => <SavedCardPanel setup={setup} mode={mode} />}
          </QueryState>
        </Section>
        <Section title="Automatic top-up" id="auto-top-up">
          <QueryState query={setup} what="Loading automatic top-up">
            {(setup) => <AutoTopUpPanel key={mode} setup={setup} mode={mode} />}
          </QueryState>
        </Section>
      </div>
      <Section title="Card payments" id="card-payments">
        <p className="muted">Each top-up by card, with its receipt.</p>
        <CardPaymentsList mode={mode} />
      </Section>
      <Section
        title="Ledger"
        id="ledger"
        actions={
          <a className="button" href={apiUrl('/billing/ledger.csv', query)} download>
            Export CSV{filter('customer_id') ? ' for this customer' : ''}
          </a>
        }
      >
        <div className="filters" role="search" aria-label="Filter the ledger">
          <CustomerSelect value={filter('customer_id')} onChange={(v) => set('customer_id', v)} hint="Choose one to export its lines for rebilling." />
          <Select label="Type" name="type" value={filter('type')} onChange={(e) => set('type', e.target.value)} options={[{ value: '', label: 'Any type' }, ...TYPES.map((t) => ({ value: t, label: words(t) }))]} />
          <Field label="From" type="date" name="from" value={filter('from')} onChange={(e) => set('from', e.target.value)} />
          <Field label="To" type="date" name="to" value={filter('to')} onChange={(e) => set('to', e.target.value)} />
        </div>
        <ListTable<LedgerEntry>
          path="/billing/ledger"
          query={query}
          caption="Ledger"
          empty={{ title: 'No ledger lines match' }}
          columns={[
            { header: 'When', cell: (e) => dateTime(e.created_at) },
            { header: 'Type', cell: (e) => words(e.type) },
            { header: 'For', cell: (e) => e.description || words(e.cause) },
            { header: 'Customer', cell: (e) => (e.customer_id ? <Link to={`/customers/${e.customer_id}`}>{e.customer_id}</Link> : '—') },
            { header: 'Amount', cell: (e) => money(e.amount_cents), numeric: true },
            { header: 'Balance after', cell: (e) => money(e.balance_after_cents), numeric: true },
          ]}
        />
      </Section>
      <Section title="Activity" id="activity">
        <p className="muted">Call starts that were refused (no balance, a cap, too many calls at once, the platform at capacity), holds released, and automatic top-ups that failed.</p>
        <ListTable<ActivityEntry>
          path="/billing/activity"
          query={{ mode }}
          caption="Activity"
          empty={{ title: 'Nothing refused or released' }}
          columns={[
            { header: 'When', cell: (a) => dateTime(a.created_at) },
            { header: 'What', cell: (a) => <Badge status={a.kind} tone={a.kind === 'call_start_refused' || a.kind === 'auto_top_up_failed' ? 'bad' : 'neutral'}>{ACTIVITY_WORDS[a.kind] ?? words(a.kind)}</Badge> },
            { header: 'Why', cell: (a) => (a.reason ? REASON_WORDS[a.reason] ?? words(a.reason) : '—') },
            { header: 'Customer', cell: (a) => (a.customer_id ? <Link to={`/customers/${a.customer_id}`}>{a.customer_id}</Link> : '—') },
            { header: 'Reference', cell: (a) => (a.reference ? <code>{a.reference}</code> : '—') },
          ]}
        />
      </Section>
    </>
  );
}
