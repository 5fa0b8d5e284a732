/**
 * The Billing page's card sections (issue 22): add funds by card, the saved card, automatic
 * top-up, and the list of card payments with their receipts. The server checks every amount and
 * permission again; these only say early what it would refuse.
 */
import { useState } from 'react';
import { Link } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan } from '../app/session.tsx';
import { Badge } from './Badge.tsx';
import { Dialog } from './Dialog.tsx';
import { Checkbox, Field, Form, FormError, Submit } from './Form.tsx';
import { Empty, Facts, Notice } from './Page.tsx';
import { ListTable } from './Table.tsx';
import { useInvalidate } from './data.ts';
import { dateTime, money } from './format.ts';
import {
  MAXIMUM_TOP_UP_CENTS,
  PAYMENT_STATUS_WORDS,
  bonusFor,
  cardExpired,
  cardWords,
  centsToInput,
  dollarsToCents,
  expiryWords,
  nextTier,
  receiptPath,
  refundWords,
  tierFor,
  tiersInWords,
} from './payments.ts';
import type { CardPayment, CreatedTopUp, Mode, PaymentsSetup } from '../types.ts';

export const SETUP_PATH = '/billing/payments';
export const setupKey = (mode: Mode) => [SETUP_PATH, mode] as const;

/** Why an amount typed in dollars would be refused, or null. */
function amountProblem(cents: number | null, minimum: number, what = 'add'): string | null {
  if (cents === null) return 'Enter an amount in dollars, such as 100 or 250.50.';
  if (cents < minimum) return `The least you can ${what} is ${money(minimum)}.`;
  if (cents > MAXIMUM_TOP_UP_CENTS) return `The most you can ${what} at once is ${money(MAXIMUM_TOP_UP_CENTS)}.`;
  return null;
}

/** "Add funds": an amount with the bonus it earns, "save this card", then the processor's payment page. */
export function AddFunds({ setup, mode }: { setup: PaymentsSetup; mode: Mode }) {
  const canWrite = useCan('billing:write');
  const [amount, setAmount] = useState('100.00');
  const [saveCard, setSaveCard] = useState(false);
  const [checked, setChecked] = useState(false);
  const cents = dollarsToCents(amount);
  const problem = amountProblem(cents, setup.minimum_top_up_cents);
  const create = useMutation({
    mutationFn: async (amountCents: number) => {
      const created = await api.post<CreatedTopUp>('/billing/top_ups', { mode, amount_cents: amountCents, save_card: saveCard });
      if (!created.checkout_url) throw new Error('The payment page could not be opened. Nothing was charged; try again.');
      return created.checkout_url;
    },
    // The processor's page (or the simulated card form in test mode): a whole-page visit.
    onSuccess: (checkoutUrl) => window.location.assign(checkoutUrl),
  });

  if (setup.processor === null) {
    return (
      <Notice tone="warn">
        <p className="notice-title">Card payments are not configured</p>
        <p>
          Adding funds by card is not set up on this platform yet, so there is nothing to pay here. Ask the platform operator to add funds to your account: the top-up they record
          shows in your balance and in the ledger below.
        </p>
      </Notice>
    );
  }
  if (!canWrite) {
    return <p className="muted">Adding funds needs the owner, admin or billing role. Ask one of them to add funds.</p>;
  }
  const tier = cents !== null ? tierFor(setup.bonus_tiers, cents) : null;
  const bonus = cents !== null && !problem ? bonusFor(setup.bonus_tiers, cents) : 0;
  const next = cents !== null ? nextTier(setup.bonus_tiers, cents) : null;
  const leaving = create.isSuccess;
  return (
    <>
      {mode === 'test' && (
        <Notice tone="info">
          Test mode: top-ups here are simulated and do not move money. You pay with a test card on a simulated card form; the top-up and its bonus are written to the test
          ledger and listed with a receipt, but test mode has no balance to add them to (test calls never stop for money).
        </Notice>
      )}
      <Form
        onSubmit={() => {
          setChecked(true);
          if (!problem && cents !== null) create.mutate(cents);
        }}
      >
        <Field
          label="Amount (USD)"
          name="amount"
          inputMode="decimal"
          autoComplete="off"
          required
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          onBlur={() => setChecked(true)}
          hint={`At least ${money(setup.minimum_top_up_cents)}. Bonus credit: ${tiersInWords(setup.bonus_tiers)}.`}
          error={checked ? problem : null}
        />
        <dl className="top-up-summary" aria-live="polite" aria-label="What this top-up adds">
          <div>
            <dt>You pay</dt>
            <dd>{problem ? '—' : money(cents)}</dd>
          </div>
          <div>
            <dt>Bonus{tier && !problem ? ` (${tier.percent} %)` : ''}</dt>
            <dd>{problem ? '—' : money(bonus)}</dd>
          </div>
          <div className="top-up-total">
            <dt>{mode === 'test' ? 'Credit (test ledger)' : 'Credit added to your balance'}</dt>
            <dd>{problem ? '—' : money((cents ?? 0) + bonus)}</dd>
          </div>
        </dl>
        {!problem && next && (
          <p className="field-hint">
            Add {money(next.from_cents)} or more for a {next.percent} % bonus.
          </p>
        )}
        <Checkbox
          name="save_card"
          label="Save this card for automatic top-ups"
          hint="The card is kept by the card processor, never here. You can remove it at any time."
          checked={saveCard}
          onChange={(e) => setSaveCard(e.target.checked)}
        />
        <FormError error={create.error} />
        {leaving && (
          <p role="status" className="muted">
            Opening the payment page…
          </p>
        )}
        <Submit pending={create.isPending || leaving}>{problem ? 'Continue to payment' : `Pay ${money(cents)} by card`}</Submit>
      </Form>
    </>
  );
}

/** The card saved for automatic top-ups: brand, last four, expiry, and Remove. */
export function SavedCardPanel({ setup, mode }: { setup: PaymentsSetup; mode: Mode }) {
  const canWrite = useCan('billing:write');
  const client = useQueryClient();
  const invalidate = useInvalidate();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => api.del<PaymentsSetup>('/billing/saved_card', { mode }),
    onSuccess: (next) => {
      setConfirming(false);
      if (next) client.setQueryData(setupKey(mode), next);
      void invalidate(SETUP_PATH);
    },
  });
  const card = setup.saved_card;
  if (!card) {
    return (
      <Empty title="No saved card">
        {setup.processor === null ? 'Cards can be saved once card payments are configured.' : 'Tick “Save this card for automatic top-ups” when you add funds, and the card you pay with is kept here.'}
      </Empty>
    );
  }
  return (
    <>
      <div className="saved-card">
        <Facts
          items={[
            ['Card', cardWords(card)],
            ['Expires', <>{expiryWords(card)}{cardExpired(card) && <> <Badge status="expired">Expired</Badge></>}</>],
          ]}
        />
        {canWrite && (
          <button type="button" className="button button-danger" onClick={() => setConfirming(true)}>
            Remove card
          </button>
        )}
      </div>
      {remove.isSuccess && <Notice tone="good">The card is removed.</Notice>}
      <Dialog title="Remove the saved card?" isOpen={confirming} onClose={() => setConfirming(false)}>
        <p>
          {cardWords(card)} is detached from your account{setup.auto_top_up ? ' and automatic top-up is turned off with it' : ''}. You can still add funds by entering a card each
          time.
        </p>
        <FormError error={remove.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={() => setConfirming(false)}>
            Keep it
          </button>
          <button type="button" className="button button-danger" disabled={remove.isPending} aria-busy={remove.isPending || undefined} onClick={() => remove.mutate()}>
            {remove.isPending ? 'Working…' : 'Remove card'}
          </button>
        </div>
      </Dialog>
    </>
  );
}

/** Automatic top-up: when the available balance falls under X, add Y with the saved card (live only). */
export function AutoTopUpPanel({ setup, mode }: { setup: PaymentsSetup; mode: Mode }) {
  const canWrite = useCan('billing:write');
  const client = useQueryClient();
  const invalidate = useInvalidate();
  const auto = setup.auto_top_up;
  const [threshold, setThreshold] = useState(centsToInput(auto?.threshold_cents ?? 5_000));
  const [amount, setAmount] = useState(centsToInput(auto?.amount_cents ?? 10_000));
  const [checked, setChecked] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const thresholdCents = dollarsToCents(threshold);
  const amountCents = dollarsToCents(amount);
  const thresholdProblem = thresholdCents === null ? 'Enter an amount in dollars, such as 50.' : null;
  const amountProblemText = amountProblem(amountCents, setup.minimum_top_up_cents);
  const applied = (next: PaymentsSetup, words: string) => {
    client.setQueryData(setupKey(mode), next);
    setSaved(words);
    // Switching on under the threshold requests a charge at once: the balance may move.
    void invalidate('/billing');
  };
  const save = useMutation({
    mutationFn: (body: { threshold_cents: number; amount_cents: number }) => api.put<PaymentsSetup>('/billing/auto_top_up', body),
    onSuccess: (next) => applied(next, auto ? 'Automatic top-up is updated.' : 'Automatic top-up is on.'),
  });
  const off = useMutation({
    mutationFn: () => api.del<PaymentsSetup>('/billing/auto_top_up'),
    onSuccess: (next) => applied(next, 'Automatic top-up is off.'),
  });

  if (mode === 'test') {
    return <Notice tone="info">Automatic top-up works in live mode only: test money never runs short. Switch to live mode to set it up.</Notice>;
  }
  if (setup.processor === null) {
    return <p className="muted">Automatic top-up charges a saved card, so it needs card payments, which are not configured on this platform yet.</p>;
  }
  const card = setup.saved_card;
  const bonus = amountCents !== null && !amountProblemText ? bonusFor(setup.bonus_tiers, amountCents) : 0;
  return (
    <>
      {auto ? (
        <div className="auto-state">
          <p>
            <Badge status={auto.status === 'on' ? 'active' : 'failed'}>{auto.status === 'on' ? 'On' : 'Failing'}</Badge>{' '}
            When your available balance falls under <strong>{money(auto.threshold_cents)}</strong>, <strong>{money(auto.amount_cents)}</strong> is added with{' '}
            {card ? cardWords(card) : 'the saved card'}.
          </p>
          {auto.status === 'failing' && (
            <div className="error-note" role="alert">
              <p className="notice-title">The last automatic top-up failed</p>
              {auto.last_failure && (
                <p>
                  {dateTime(auto.last_failure.at)}: {auto.last_failure.message}
                </p>
              )}
              <p>
                {auto.retry_after ? `It will try again after ${dateTime(auto.retry_after)}.` : 'It will try again when your balance next falls under the threshold.'} To fix it sooner,
                add funds with a working card and tick “Save this card for automatic top-ups”.
              </p>
            </div>
          )}
        </div>
      ) : (
        <p className="muted">Off. Turn it on to have your balance topped up from your saved card before calls are refused for lack of funds.</p>
      )}
      {!card ? (
        <Notice tone="warn">
          Automatic top-up needs a saved card. Add funds above with “Save this card for automatic top-ups” ticked, and the card you pay with is used for automatic top-ups.
        </Notice>
      ) : canWrite ? (
        <Form
          onSubmit={() => {
            setChecked(true);
            setSaved(null);
            if (!thresholdProblem && !amountProblemText && thresholdCents !== null && amountCents !== null) save.mutate({ threshold_cents: thresholdCents, amount_cents: amountCents });
          }}
        >
          <div className="form-row">
            <Field
              label="When the balance falls under (USD)"
              name="threshold"
              inputMode="decimal"
              autoComplete="off"
              required
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
              hint="Your available balance: what is left after holds for running calls."
              error={checked ? thresholdProblem : null}
            />
            <Field
              label="Add (USD)"
              name="auto_amount"
              inputMode="decimal"
              autoComplete="off"
              required
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              hint={bonus ? `At least ${money(setup.minimum_top_up_cents)}. Earns a ${money(bonus)} bonus each time.` : `At least ${money(setup.minimum_top_up_cents)}.`}
              error={checked ? amountProblemText : null}
            />
          </div>
          <p className="field-hint">If your balance is already under the threshold, a top-up is charged at once. A failed charge is tried again after a day at most once.</p>
          <FormError error={save.error ?? off.error} />
          {saved && (
            <p role="status" className="notice notice-good">
              {saved}
            </p>
          )}
          <div className="form-actions">
            <Submit pending={save.isPending}>{auto ? 'Save automatic top-up' : 'Turn on automatic top-up'}</Submit>
            {auto && (
              <button type="button" className="button button-danger" disabled={off.isPending} aria-busy={off.isPending || undefined} onClick={() => off.mutate()}>
                {off.isPending ? 'Working…' : 'Turn off'}
              </button>
            )}
          </div>
        </Form>
      ) : null}
    </>
  );
}

/** Every card payment of the mode, newest first, each with its receipt. */
export function CardPaymentsList({ mode }: { mode: Mode }) {
  return (
    <ListTable<CardPayment>
      path="/billing/top_ups"
      query={{ mode }}
      caption="Card payments"
      limit={10}
      empty={{ title: 'No card payments yet', body: 'Each top-up by card is listed here with its receipt.' }}
      columns={[
        { header: 'Date', cell: (p) => <Link to={receiptPath(p)}>{dateTime(p.paid_at ?? p.created_at)}</Link> },
        { header: 'Amount', cell: (p) => money(p.amount_cents), numeric: true },
        { header: 'Bonus', cell: (p) => money(p.bonus_cents), numeric: true },
        { header: 'Card', cell: (p) => cardWords(p.card) },
        { header: 'Status', cell: (p) => <Badge status={p.status}>{PAYMENT_STATUS_WORDS[p.status] ?? p.status}</Badge> },
        { header: 'Refunded', cell: (p) => refundWords(p), numeric: true },
      ]}
    />
  );
}
