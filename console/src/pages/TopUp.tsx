import { useEffect } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode, useSession, useSetMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { ErrorNote, Facts, Loading, Notice, PageHeader, Section } from '../ui/Page.tsx';
import { dateTime, money } from '../ui/format.ts';
import { PAYMENT_KIND_WORDS, PAYMENT_STATUS_WORDS, cardWords, refundWords } from '../ui/payments.ts';
import type { CardPayment, Mode } from '../types.ts';

/** How often a pending payment is asked about again (the server asks the processor each time). */
const POLL_MS = 1_500;

const TITLES: Record<CardPayment['status'], string> = {
  pending: 'Confirming your payment',
  succeeded: 'Receipt',
  failed: 'Payment failed',
  canceled: 'Payment canceled',
};

/**
 * A card payment: the page the processor sends the browser back to (`success_url`) and the
 * receipt the Billing page links to. While the payment is pending it asks the GET route again
 * until it settles; that route credits a paid payment once, so reloading this page is safe.
 */
export default function TopUp() {
  const { id = '' } = useParams();
  const [params] = useSearchParams();
  const consoleMode = useMode();
  const setMode = useSetMode();
  const client = useQueryClient();
  const wanted = params.get('mode');
  const mode: Mode = wanted === 'live' || wanted === 'test' ? wanted : consoleMode;
  // The console shows the mode of the payment (the frame's banner and the pages after this one).
  useEffect(() => {
    if (mode !== consoleMode) setMode(mode);
  }, [mode, consoleMode, setMode]);
  const payment = useQuery({
    queryKey: ['/billing/top_ups', mode, id],
    queryFn: () => api.get<CardPayment>(`/billing/top_ups/${encodeURIComponent(id)}`, { mode }),
    refetchInterval: (q) => (q.state.data?.status === 'pending' ? POLL_MS : false),
    refetchIntervalInBackground: false,
  });
  const status = payment.data?.status;
  // Once it settles, the balance, ledger and list on the Billing page are read again.
  useEffect(() => {
    if (status && status !== 'pending') void client.invalidateQueries({ predicate: (q) => typeof q.queryKey[0] === 'string' && q.queryKey[0].startsWith('/billing') && q.queryKey[2] !== id });
  }, [status, client, id]);

  if (payment.error) {
    return (
      <>
        <PageHeader title="Card payment" />
        <ErrorNote error={payment.error} />
        <p>
          <Link to="/billing">Back to billing</Link>
        </p>
      </>
    );
  }
  if (!payment.data) return <Loading what="Loading the payment" />;
  return <PaymentView payment={payment.data} />;
}

function PaymentView({ payment: p }: { payment: CardPayment }) {
  const { account } = useSession();
  const title = TITLES[p.status];
  const back = `/billing?mode=${p.mode}`;
  return (
    <div className={`receipt receipt-${p.status}`}>
      <PageHeader
        title={title}
        description={p.status === 'succeeded' ? `${account.name} · card top-up` : undefined}
        actions={
          <>
            {p.status === 'succeeded' && (
              <button type="button" className="button no-print" onClick={() => window.print()}>
                Print receipt
              </button>
            )}
            <Link className="button no-print" to={back}>
              Back to billing
            </Link>
          </>
        }
      />
      {p.mode === 'test' && <Notice tone="info">Test mode: this payment was simulated. No money moved and no card was charged.</Notice>}
      {p.status === 'pending' && (
        <Section title="Waiting for the card processor" id="payment-state">
          <p className="loading-inline" role="status">
            <span className="spinner" aria-hidden="true" /> Confirming your payment…
          </p>
          <p className="muted">
            This page updates by itself. It is safe to reload it or to come back later: the funds are added to your balance once, as soon as the payment is confirmed.
          </p>
        </Section>
      )}
      {p.status === 'succeeded' && (
        <Notice tone="good">
          <span role="status">
            {p.mode === 'test'
              ? `Paid (simulated). ${money(p.amount_cents)}${p.bonus_cents ? ` and a ${money(p.bonus_cents)} bonus are` : ' is'} written to the test ledger; test mode has no balance to add them to.`
              : `Paid. ${money(p.amount_cents)}${p.bonus_cents ? ` and a ${money(p.bonus_cents)} bonus are` : ' is'} added to your balance.`}
          </span>
        </Notice>
      )}
      {(p.status === 'failed' || p.status === 'canceled') && (
        <div className="error-note" role="alert">
          <p className="notice-title">{p.status === 'failed' ? 'The payment did not go through.' : 'The payment was canceled.'}</p>
          <p>{p.failure?.message ?? (p.status === 'canceled' ? 'The payment page was closed or expired before the card was charged.' : 'The card processor refused the payment.')}</p>
          <p>Nothing was added to your balance and the card was not charged.</p>
        </div>
      )}
      <Section title="Payment" id="payment">
        <Facts
          items={[
            ['Status', <Badge key="s" status={p.status}>{PAYMENT_STATUS_WORDS[p.status] ?? p.status}</Badge>],
            [p.status === 'succeeded' ? 'Amount paid' : 'Amount', <strong key="a">{money(p.amount_cents)}</strong>],
            ['Bonus credit', p.status === 'succeeded' ? money(p.bonus_cents) : '—'],
            ['Credit added', p.status === 'succeeded' ? money(p.amount_cents + p.bonus_cents) : '—'],
            ['Card', cardWords(p.card)],
            ['Date', dateTime(p.paid_at ?? p.created_at)],
            ['Kind', PAYMENT_KIND_WORDS[p.kind] ?? p.kind],
            ['Refunded', refundWords(p)],
            ['Payment reference', <code key="r">{p.id}</code>],
          ]}
        />
        {p.receipt_url && (
          <p className="no-print">
            <a href={p.receipt_url} target="_blank" rel="noopener noreferrer">
              The card processor’s receipt
            </a>{' '}
            <span className="muted">(opens in a new tab)</span>
          </p>
        )}
        {p.bonus_cents > 0 && <p className="muted">Bonus credit is spent before paid credit, expires twelve months after it is granted and is not refundable.</p>}
      </Section>
      {(p.status === 'failed' || p.status === 'canceled') && (
        <p className="no-print">
          <Link className="button button-primary" to={`${back}#add-funds`}>
            Try again
          </Link>
        </p>
      )}
    </div>
  );
}
