import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, ApiError } from '../api.ts';
import { Field, Form, FormError, Submit } from '../ui/Form.tsx';
import { ErrorNote, Loading, Notice, PageHeader } from '../ui/Page.tsx';
import { money } from '../ui/format.ts';
import { brandName } from '../ui/payments.ts';
import type { SimulatedCheckout } from '../types.ts';
import { TEST_CARDS, type TestCard } from '../../../payments/test-cards.ts';

/** What a test card of the server's table (payments/test-cards.ts) does, in words. */
function testCardDoes(card: TestCard): string {
  const b = card.behaviour;
  if (b.kind === 'succeeds') return 'Succeeds';
  if (b.kind === 'authentication') return 'Asks for authentication: succeeds here; once saved, automatic top-ups with it fail';
  return `Declined (${b.declineCode.replace(/_/g, ' ')})`;
}

/** "4242424242424242" → "4242 4242 4242 4242" (also while typing). */
function groupDigits(text: string): string {
  return text
    .replace(/\D/g, '')
    .slice(0, 19)
    .replace(/(\d{4})(?=\d)/g, '$1 ');
}

/** "MM/YY", "MM / YYYY" → month and four-digit year, or null. */
function parseExpiry(text: string): { exp_month: number; exp_year: number } | null {
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(text);
  if (!m) return null;
  const month = Number(m[1]);
  if (month < 1 || month > 12) return null;
  return { exp_month: month, exp_year: m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]) };
}

/**
 * Test mode's card form (`checkout_url` of a test-mode top-up): looks and behaves as a processor's
 * hosted payment page, says it is a test, shows a decline in words, and sends the browser to the
 * payment's page once paid.
 */
export default function Checkout() {
  const { session_id: id = '' } = useParams();
  const session = useQuery({
    queryKey: ['/billing/simulated_checkout', id],
    queryFn: () => api.get<SimulatedCheckout>(`/billing/simulated_checkout/${encodeURIComponent(id)}`),
  });
  if (session.error) {
    return (
      <>
        <PageHeader title="Test checkout" />
        <ErrorNote error={session.error} />
        <p>
          <Link to="/billing">Back to billing</Link>
        </p>
      </>
    );
  }
  if (!session.data) return <Loading what="Opening the test checkout" />;
  return <CheckoutForm session={session.data} />;
}

function CheckoutForm({ session }: { session: SimulatedCheckout }) {
  const [number, setNumber] = useState('');
  const [expiry, setExpiry] = useState('');
  const [cvc, setCvc] = useState('');
  const [problems, setProblems] = useState<{ number?: string; expiry?: string; cvc?: string }>({});
  const pay = useMutation({
    mutationFn: (body: { card_number: string; exp_month: number; exp_year: number; cvc: string }) =>
      api.post<{ status: 'complete'; redirect_url: string }>(`/billing/simulated_checkout/${encodeURIComponent(session.id)}/pay`, body),
    onSuccess: (done) => window.location.assign(done.redirect_url),
  });
  const declined = pay.error instanceof ApiError && pay.error.status === 402 ? pay.error : null;
  const amount = money(session.amount_cents);

  const submit = () => {
    const digits = number.replace(/\D/g, '');
    const exp = parseExpiry(expiry);
    const next = {
      number: digits.length < 12 || digits.length > 19 ? 'Enter the card number, 12 to 19 digits.' : undefined,
      expiry: exp ? undefined : 'Enter the expiry as MM/YY, such as 12/34.',
      cvc: /^\d{3,4}$/.test(cvc.trim()) ? undefined : 'Enter the 3 or 4 digits on the back of the card.',
    };
    setProblems(next);
    if (next.number || next.expiry || next.cvc || !exp) return;
    pay.mutate({ card_number: digits, ...exp, cvc: cvc.trim() });
  };

  return (
    <>
      <PageHeader title="Test checkout" description="Simulated card payment for adding funds in test mode." />
      <div className="checkout">
        <div className="checkout-summary">
          <p className="checkout-label">Add funds</p>
          <p className="checkout-amount">{amount}</p>
          <p className="muted">{session.save_card ? 'The card is saved for automatic top-ups.' : 'The card is used for this payment only.'}</p>
        </div>
        <div className="checkout-pay">
          <Notice tone="warn">
            <strong>This is a test payment: no card is charged.</strong> Use one of the test cards below.
          </Notice>
          {session.status === 'complete' ? (
            <Notice tone="good">
              This payment is complete. <a href={session.success_url}>See the payment</a>
            </Notice>
          ) : session.status === 'expired' ? (
            <div className="error-note" role="alert">
              This checkout expired before it was paid. <Link to="/billing#add-funds">Start a new top-up</Link>
            </div>
          ) : (
            <Form className="form checkout-form" onSubmit={submit}>
              <Field
                label="Card number"
                name="card_number"
                inputMode="numeric"
                autoComplete="cc-number"
                placeholder="1234 1234 1234 1234"
                required
                value={number}
                onChange={(e) => setNumber(groupDigits(e.target.value))}
                error={problems.number}
              />
              <div className="form-row checkout-row">
                <Field label="Expiry (MM/YY)" name="expiry" inputMode="numeric" autoComplete="cc-exp" placeholder="MM/YY" required value={expiry} onChange={(e) => setExpiry(e.target.value)} error={problems.expiry} />
                <Field label="CVC" name="cvc" inputMode="numeric" autoComplete="cc-csc" placeholder="123" maxLength={4} required value={cvc} onChange={(e) => setCvc(e.target.value)} error={problems.cvc} />
              </div>
              {declined ? (
                <div className="error-note decline" role="alert">
                  <p className="notice-title">Card declined</p>
                  <p>{declined.message}</p>
                  <p>Nothing was charged. Try another card.</p>
                </div>
              ) : (
                <FormError error={pay.error} />
              )}
              {pay.isSuccess && (
                <p role="status" className="muted">
                  Paid. Opening your receipt…
                </p>
              )}
              <Submit pending={pay.isPending || pay.isSuccess}>Pay {amount}</Submit>
              <p>
                <a href={session.cancel_url}>Cancel and go back to billing</a>
              </p>
            </Form>
          )}
          <details className="test-cards" open>
            <summary>Test cards</summary>
            <p className="muted">Any future expiry and any 3-digit CVC.</p>
            <ul>
              {TEST_CARDS.map((c) => (
                <li key={c.number}>
                  <code>{groupDigits(c.number)}</code> {brandName(c.brand)}: {testCardDoes(c)}
                </li>
              ))}
            </ul>
          </details>
        </div>
      </div>
    </>
  );
}
