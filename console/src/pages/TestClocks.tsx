import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Form, Field, FormError, Select, Submit } from '../ui/Form.tsx';
import { Empty, ErrorNote, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { rowsOf, useInvalidate, localInputToIso, isoToLocalInput } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { CustomerRow, List, TestClock } from '../types.ts';

const STEPS = [
  { seconds: 3600, label: '+1 hour' },
  { seconds: 86_400, label: '+1 day' },
  { seconds: 7 * 86_400, label: '+1 week' },
  { seconds: 31 * 86_400, label: '+1 month' },
];

/** Test clocks (test mode only): a clock holds a time its test customers live on, moved only by you. */
export default function TestClocks() {
  const mode = useMode();
  const canWrite = useCan('test_clocks:write');
  const clocks = useQuery({ queryKey: ['/test_clocks'], queryFn: () => api.get<List<TestClock>>('/test_clocks', { limit: 100 }), enabled: mode === 'test' });
  if (mode !== 'test') {
    return (
      <>
        <PageHeader title="Test clocks" />
        <Notice tone="info">Test clocks exist in test mode only: switch to test mode at the top to use them.</Notice>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title="Test clocks"
        description="Put test customers on a clock and move it forward: calls that wait for a calling window, holds, renewals and month closes play out at once. Live records and webhook signatures stay on real time."
      />
      {canWrite && <CreateClock />}
      <QueryState query={clocks}>
        {(list) => (list.data.length === 0 ? <Empty title="No test clock yet" /> : <>{list.data.map((c) => <Clock key={c.id} clock={c} />)}</>)}
      </QueryState>
    </>
  );
}

function CreateClock() {
  const invalidate = useInvalidate();
  const [name, setName] = useState('');
  const [start, setStart] = useState(() => isoToLocalInput(new Date().toISOString()));
  const create = useMutation({
    mutationFn: () => api.post<TestClock>('/test_clocks', { name: name.trim() || undefined, frozen_time: localInputToIso(start) }),
    onSuccess: () => {
      setName('');
      void invalidate('/test_clocks');
    },
  });
  return (
    <Section title="New clock" id="new-clock">
      <Form onSubmit={() => create.mutate()}>
        <div className="form-row">
          <Field label="Name" name="name" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} hint="Such as “renewal walk-through”." />
          <Field label="Starts at" name="frozen_time" type="datetime-local" required value={start} onChange={(e) => setStart(e.target.value)} />
        </div>
        <FormError error={create.error} />
        <Submit pending={create.isPending}>Create clock</Submit>
      </Form>
    </Section>
  );
}

function Clock({ clock }: { clock: TestClock }) {
  const canWrite = useCan('test_clocks:write');
  const invalidate = useInvalidate();
  const [to, setTo] = useState('');
  const [customer, setCustomer] = useState('');
  const advance = useMutation({
    mutationFn: (body: { seconds: number } | { to: string }) => api.post<TestClock>(`/test_clocks/${clock.id}/advance`, body),
    onSuccess: () => invalidate('/test_clocks', '/calls', '/customers', '/overview', '/appointments', '/billing'),
  });
  const remove = useMutation({ mutationFn: () => api.del(`/test_clocks/${clock.id}`), onSuccess: () => invalidate('/test_clocks', '/customers') });
  const customers = useQuery({ queryKey: ['/customers', 'for-clock'], queryFn: () => api.get<List<CustomerRow>>('/customers', { mode: 'test', limit: 200 }), enabled: canWrite });
  const attach = useMutation({
    mutationFn: () => api.patch(`/customers/${customer}/test_clock`, { test_clock: clock.id }),
    onSuccess: () => {
      setCustomer('');
      void invalidate('/test_clocks', '/customers');
    },
  });
  return (
    <Section
      title={clock.name ?? 'Test clock'}
      id={`clock-${clock.id}`}
      actions={
        canWrite && (
          <button type="button" className="button button-small button-danger" onClick={() => window.confirm('Delete this clock? Its customers go back to real time.') && remove.mutate()}>
            Delete
          </button>
        )
      }
    >
      <p>
        Clock time: <strong>{dateTime(clock.frozen_time)}</strong> {clock.status === 'advancing' && <Badge tone="wait">Advancing</Badge>}
      </p>
      <p className="muted">
        {clock.customer_count === 0 ? 'No customer is on this clock yet.' : `${clock.customer_count} test customer${clock.customer_count === 1 ? '' : 's'} on it.`}
      </p>
      <ErrorNote error={advance.error ?? remove.error ?? attach.error} />
      {advance.isSuccess && <Notice tone="good">Moved to {dateTime(advance.data.frozen_time)}; what was due by then has run.</Notice>}
      {canWrite && (
        <>
          <div className="page-actions" role="group" aria-label="Advance the clock">
            {STEPS.map((s) => (
              <button key={s.seconds} type="button" className="button" disabled={advance.isPending} onClick={() => advance.mutate({ seconds: s.seconds })}>
                {s.label}
              </button>
            ))}
          </div>
          <Form
            onSubmit={() => {
              const iso = localInputToIso(to);
              if (iso) advance.mutate({ to: iso });
            }}
          >
            <div className="form-row">
              <Field label="Advance to" name="to" type="datetime-local" required value={to} min={isoToLocalInput(clock.frozen_time)} onChange={(e) => setTo(e.target.value)} />
            </div>
            <Submit pending={advance.isPending} variant="secondary">
              Advance
            </Submit>
          </Form>
          <Form
            onSubmit={() => {
              if (customer) attach.mutate();
            }}
          >
            <Select
              label="Put a test customer on this clock"
              name="customer"
              value={customer}
              onChange={(e) => setCustomer(e.target.value)}
              options={[{ value: '', label: 'Choose a customer' }, ...rowsOf(customers.data).map((c) => ({ value: c.id, label: c.name }))]}
            />
            <Submit pending={attach.isPending} variant="secondary">
              Attach
            </Submit>
          </Form>
        </>
      )}
    </Section>
  );
}
