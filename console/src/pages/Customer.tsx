import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { CopyField } from '../ui/Copy.tsx';
import { Form, Field, FormError, formValues, Select, Submit } from '../ui/Form.tsx';
import { Empty, ErrorNote, Facts, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { PlaceCall } from '../ui/PlaceCall.tsx';
import { CallSettingsSection } from './CustomerCallSettings.tsx';
import { BookingSection } from './CustomerBooking.tsx';
import { CalendarSection } from './CustomerCalendar.tsx';
import { DataTable } from '../ui/Table.tsx';
import { rowsOf, useInvalidate } from '../ui/data.ts';
import { date, dateTime, money, words } from '../ui/format.ts';
import type { Blocker, CustomerLimits, CustomerPage, CustomerTestClock, List, OnboardingLink, TestClock } from '../types.ts';

/** Who must act, in words. */
export function whoActs(waitingOn: string): string {
  if (waitingOn === 'reseller') return 'You';
  if (waitingOn === 'customer') return 'Your customer';
  if (waitingOn === 'service') return 'The service (nothing for you to do)';
  if (waitingOn === 'nobody') return 'Nobody';
  return words(waitingOn);
}

export default function Customer() {
  const { id = '' } = useParams();
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const [calling, setCalling] = useState(false);
  const page = useQuery({ queryKey: ['/customers', id, mode], queryFn: () => api.get<CustomerPage>(`/customers/${encodeURIComponent(id)}`, { mode }) });
  return (
    <QueryState query={page}>
      {(p) => (
        <>
          <p>
            <Link to="/customers">← Customers</Link>
          </p>
          <PageHeader
            title={p.customer.name}
            description={
              <>
                <Badge status={p.customer.status} /> <Badge tone="neutral">{p.customer.mode === 'test' ? 'Test customer' : 'Live customer'}</Badge>
              </>
            }
            actions={
              canWrite && (
                <button type="button" className="button button-primary" onClick={() => setCalling(true)}>
                  {p.customer.mode === 'test' ? 'Place a test call' : 'Place a call'}
                </button>
              )
            }
          />
          <Section title="Details" id="details">
            <Facts
              items={[
                ['Id', <code key="id">{p.customer.id}</code>],
                ['Your reference', p.customer.external_ref ?? '—'],
                ['Country', p.customer.country],
                ['Time zone', p.customer.timezone],
                ['Website', p.customer.website_url ?? '—'],
                ['Phone', p.customer.phone ?? '—'],
                ['Registered name', p.customer.registered_name ?? `— (calls say "${p.customer.name}")`],
                ['Registered address', p.customer.registered_address ?? (p.customer.country === 'GB' ? '— (needed to call UK numbers)' : '—')],
                ['Created', dateTime(p.customer.created_at)],
              ]}
            />
          </Section>
          <ReadinessSection readiness={p.readiness} mode={p.customer.mode} />
          <Section title="Provisioning" id="provisioning">
            <p>
              {p.provisioning.ready ? <Badge tone="good">Ready</Badge> : <Badge tone="wait">{words(p.provisioning.state)}</Badge>}{' '}
              {!p.provisioning.ready && <span className="muted">Waiting on: {whoActs(p.provisioning.waiting_on)}</span>}
            </p>
            <ol className="steps">
              {p.provisioning.steps.map((s) => (
                <li key={s.step} className={s.done ? 'done' : undefined}>
                  <div>
                    <strong>{words(s.step)}</strong> {s.done ? <Badge tone="good">Done</Badge> : <Badge tone="wait">Waiting on {whoActs(s.waiting_on).toLowerCase()}</Badge>}
                    {s.blocker && <p className="muted">{s.message ?? words(s.blocker)}</p>}
                  </div>
                </li>
              ))}
            </ol>
          </Section>
          <OnboardingLinks customerId={p.customer.id} links={p.onboarding_links} />
          <CalendarSection customerId={p.customer.id} />
          <Limits customerId={p.customer.id} limits={p.limits} />
          {/* Keyed by the customer only: each form takes its values from its own save's answer, and a
              key on the saved values remounted the section when the page refetched after a save,
              so "… saved." vanished as soon as it was shown. */}
          <CallSettingsSection key={p.customer.id} customer={p.customer} />
          <BookingSection key={p.customer.id} customer={p.customer} />
          {p.customer.mode === 'test' && <ClockSection customerId={p.customer.id} current={p.test_clock} />}
          <Section title="Numbers" id="numbers">
            {p.numbers.length === 0 ? (
              <Empty title="No number yet" />
            ) : (
              <DataTable
                caption="Numbers"
                rowKey={(n) => n.id}
                rows={p.numbers}
                columns={[
                  { header: 'Number', cell: (n) => n.phone_number },
                  { header: 'Kind', cell: (n) => (n.kind === 'rented' ? 'Rented' : 'Caller ID') },
                  { header: 'Status', cell: (n) => <Badge status={n.status} /> },
                  { header: 'Monthly', cell: (n) => money(n.monthly_cents), numeric: true },
                  { header: 'Renews', cell: (n) => date(n.renews_on) },
                ]}
              />
            )}
          </Section>
          <Section title="Websites" id="websites">
            {p.websites.length === 0 ? (
              <Empty title="No website ordered" />
            ) : (
              <DataTable
                caption="Websites"
                rowKey={(w) => w.id}
                rows={p.websites}
                columns={[
                  { header: 'Status', cell: (w) => <Badge status={w.status} /> },
                  {
                    header: 'Preview',
                    cell: (w) =>
                      w.preview_url ? (
                        <a href={w.preview_url} target="_blank" rel="noreferrer noopener">
                          Open the preview<span className="visually-hidden"> (opens in a new tab)</span>
                        </a>
                      ) : (
                        '—'
                      ),
                  },
                  { header: 'Address', cell: (w) => (w.url && w.status === 'live' ? <a href={w.url}>{w.url}</a> : '—') },
                  { header: 'Domain', cell: (w) => (w.domain ? `${w.domain}${w.domain_verified ? '' : ' (not pointed yet)'}` : '—') },
                  { header: 'Ordered', cell: (w) => date(w.created_at) },
                ]}
              />
            )}
          </Section>
          <Section title="Chat sessions" id="chat-sessions">
            {p.chat_sessions.length === 0 ? (
              <Empty title="No chat session" />
            ) : (
              <DataTable
                caption="Chat sessions"
                rowKey={(c) => c.id}
                rows={p.chat_sessions}
                columns={[
                  { header: 'Person', cell: (c) => c.display_name ?? c.end_user_ref },
                  { header: 'Status', cell: (c) => <Badge status={c.status} /> },
                  { header: 'Messages', cell: (c) => `${c.messages_sent} of ${c.message_limit}`, numeric: true },
                  { header: 'Last used', cell: (c) => dateTime(c.last_used_at) },
                  { header: 'Expires', cell: (c) => dateTime(c.expires_at) },
                ]}
              />
            )}
          </Section>
          <p>
            <Link to={`/calls?customer_id=${encodeURIComponent(p.customer.id)}`}>This customer's calls</Link> ·{' '}
            <Link to={`/billing?customer_id=${encodeURIComponent(p.customer.id)}`}>This customer's ledger</Link>
          </p>
          {canWrite && <PlaceCall customerId={p.customer.id} isOpen={calling} onClose={() => setCalling(false)} />}
        </>
      )}
    </QueryState>
  );
}

function BlockerList({ blockers }: { blockers: Blocker[] }) {
  return (
    <ul className="trail">
      {blockers.map((b) => (
        <li key={b.code}>
          <Badge tone={b.who === 'you' || b.waiting_on === 'reseller' ? 'bad' : 'wait'}>{b.who_label ?? whoActs(b.waiting_on)}</Badge>
          <span>{b.message}</span>
          {(b.what_to_do ?? b.action?.description) && (
            <span className="detail">
              What to do: {b.what_to_do ?? b.action?.description}
              {b.where && (
                <>
                  {' '}
                  <Link to={b.where.path.replace(/^\/console/, '') || '/'}>{b.where.label}</Link>
                </>
              )}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function ReadinessSection({ readiness, mode }: { readiness: CustomerPage['readiness']; mode: 'test' | 'live' }) {
  const test = mode === 'test';
  const ready = test ? readiness.ready_for_test_calls : readiness.ready_for_live_calls;
  const blockers = test ? readiness.test_blockers : readiness.blockers;
  return (
    <Section title="Readiness" id="readiness">
      <p>
        {ready ? <Badge tone="good">Ready for {test ? 'test' : 'live'} calls</Badge> : <Badge tone="wait">Not ready for {test ? 'test' : 'live'} calls</Badge>}
      </p>
      {blockers.length > 0 && (
        <>
          <p>What stands in the way, and who must act:</p>
          <BlockerList blockers={blockers} />
        </>
      )}
      {test && readiness.blockers.length > 0 && (
        <details>
          <summary>Before live calls ({readiness.blockers.length} more)</summary>
          <BlockerList blockers={readiness.blockers} />
        </details>
      )}
      {readiness.notices.map((n) => (
        <Notice key={n.jurisdiction} tone="info">
          {n.message}
        </Notice>
      ))}
    </Section>
  );
}

function OnboardingLinks({ customerId, links }: { customerId: string; links: OnboardingLink[] }) {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const invalidate = useInvalidate();
  const mint = useMutation({
    // With an address, the link is also emailed to the customer in your brand.
    mutationFn: (email?: string) => api.post<OnboardingLink>(`/customers/${customerId}/onboarding_links`, email ? { mode, email } : { mode }),
    onSuccess: () => invalidate('/customers'),
  });
  return (
    <Section
      title="Onboarding links"
      id="onboarding-links"
      actions={
        canWrite && (
          <button type="button" className="button" disabled={mint.isPending} onClick={() => mint.mutate(undefined)}>
            Create onboarding link
          </button>
        )
      }
    >
      <p className="muted">Your customer opens the link to accept the calling terms. A new link replaces the ones before it.</p>
      {canWrite && (
        <Form onSubmit={(form) => mint.mutate(formValues(form).email)}>
          <Field label="Customer's email" name="email" type="email" required autoComplete="off" hint="The link is emailed in your brand, from you." />
          <Submit pending={mint.isPending} variant="secondary">
            Send by email
          </Submit>
        </Form>
      )}
      <FormError error={mint.error} />
      {mint.data?.emailed_to && <Notice tone="good">Emailed to {mint.data.emailed_to}.</Notice>}
      {mint.data?.url && (
        <Notice tone="info">
          {mint.data.emailed_to ? 'Your copy of the link.' : 'Send this link to your customer.'} It is shown only now{mint.data.expires_in_days ? ` and works for ${mint.data.expires_in_days} days` : ''}:
          <CopyField label="Onboarding link" value={mint.data.url} />
        </Notice>
      )}
      {links.length === 0 ? (
        <Empty title="No link yet" />
      ) : (
        <DataTable
          caption="Onboarding links"
          rowKey={(l) => l.id}
          rows={links}
          columns={[
            { header: 'Link', cell: (l) => <code>{l.prefix}…</code> },
            { header: 'Status', cell: (l) => <Badge status={l.status} /> },
            { header: 'Accepted by', cell: (l) => (l.accepted_by ? `${l.accepted_by}, ${dateTime(l.completed_at)}` : '—') },
            { header: 'Emailed to', cell: (l) => l.emailed_to ?? '—' },
            { header: 'Created', cell: (l) => dateTime(l.created_at) },
            { header: 'Expires', cell: (l) => dateTime(l.expires_at) },
          ]}
        />
      )}
    </Section>
  );
}

/** Dollars typed → cents, '' → null (no cap). */
function centsOf(dollars: string): number | null {
  if (dollars.trim() === '') return null;
  return Math.round(Number(dollars) * 100);
}
const dollarsOf = (cents: number | null) => (cents === null ? '' : (cents / 100).toFixed(2));

function Limits({ customerId, limits }: { customerId: string; limits: CustomerLimits }) {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const invalidate = useInvalidate();
  const [daily, setDaily] = useState(dollarsOf(limits.daily_spend_cap_cents));
  const [monthly, setMonthly] = useState(dollarsOf(limits.monthly_spend_cap_cents));
  const [concurrent, setConcurrent] = useState(limits.max_concurrent_calls === null ? '' : String(limits.max_concurrent_calls));
  const save = useMutation({
    mutationFn: () =>
      api.patch(`/customers/${customerId}/limits`, {
        mode,
        daily_spend_cap_cents: centsOf(daily),
        monthly_spend_cap_cents: centsOf(monthly),
        max_concurrent_calls: concurrent.trim() === '' ? null : Number(concurrent),
      }),
    onSuccess: () => invalidate('/customers'),
  });
  return (
    <Section title="Limits" id="limits">
      {limits.spend && (
        <p className="muted">
          Spent today {money(limits.spend.today_cents)}, this month {money(limits.spend.month_cents)}.
        </p>
      )}
      <Form onSubmit={() => save.mutate()}>
        <fieldset disabled={!canWrite} className="form-row">
          <legend className="visually-hidden">Limits</legend>
          <Field label="Daily spend cap (USD)" hint="Empty: no cap." inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,2})?" value={daily} onChange={(e) => setDaily(e.target.value)} />
          <Field label="Monthly spend cap (USD)" hint="Empty: no cap." inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,2})?" value={monthly} onChange={(e) => setMonthly(e.target.value)} />
          <Field label="Calls at once" hint="Empty: the account's limit." type="number" min={0} value={concurrent} onChange={(e) => setConcurrent(e.target.value)} />
        </fieldset>
        <FormError error={save.error} />
        {save.isSuccess && <Notice tone="good">Limits saved.</Notice>}
        {canWrite && <Submit pending={save.isPending}>Save limits</Submit>}
      </Form>
    </Section>
  );
}

/** Puts the test customer on a test clock or back on real time. */
function ClockSection({ customerId, current }: { customerId: string; current: CustomerPage['test_clock'] }) {
  const canWrite = useCan('test_clocks:write');
  const invalidate = useInvalidate();
  const clocks = useQuery({ queryKey: ['/test_clocks', 'all'], queryFn: () => api.get<List<TestClock>>('/test_clocks', { limit: 100 }) });
  const attach = useMutation({
    mutationFn: (test_clock: string | null) => api.patch<CustomerTestClock>(`/customers/${customerId}/test_clock`, { test_clock }),
    onSuccess: () => invalidate('/customers', '/test_clocks'),
  });
  const options = rowsOf(clocks.data);
  const now = current ? (
    <p>
      On the clock <Link to="/test-clocks">{current.name ?? current.id}</Link>, at {dateTime(current.frozen_time)}.
    </p>
  ) : (
    <p>On real time (no clock).</p>
  );
  if (!canWrite) {
    return (
      <Section title="Test clock" id="test-clock">
        {now}
      </Section>
    );
  }
  const attached = attach.data ? options.find((c) => c.id === attach.data.test_clock) : undefined;
  return (
    <Section title="Test clock" id="test-clock">
      <p className="muted">A test customer on a test clock lives on the clock's time: its calls wait for the clock, not for real time.</p>
      {!attach.data && now}
      <Form
        onSubmit={(form) => {
          const v = new FormData(form).get('test_clock');
          attach.mutate(typeof v === 'string' && v ? v : null);
        }}
      >
        <Select label="Put this customer on" name="test_clock" defaultValue={current?.id ?? ''} key={`${current?.id ?? 'none'}-${options.length}`} options={[{ value: '', label: 'Real time (no clock)' }, ...options.map((c) => ({ value: c.id, label: c.name ?? c.id }))]} />
        <ErrorNote error={attach.error} />
        {attach.data && (
          <Notice tone="good">
            {attach.data.test_clock ? (
              <>
                Now on the clock <Link to="/test-clocks">{attached?.name ?? attach.data.test_clock}</Link>
                {attached ? `, at ${dateTime(attached.frozen_time)}` : ''}.
              </>
            ) : (
              'Now on real time.'
            )}
          </Notice>
        )}
        <Submit pending={attach.isPending} variant="secondary">
          Save clock
        </Submit>
      </Form>
    </Section>
  );
}
