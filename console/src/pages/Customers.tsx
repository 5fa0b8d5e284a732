import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Dialog } from '../ui/Dialog.tsx';
import { Form, Field, FormError, Select, Submit, formValues } from '../ui/Form.tsx';
import { PageHeader } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { rowsOf, useInvalidate } from '../ui/data.ts';
import { date } from '../ui/format.ts';
import type { Customer, CustomerRow, List, TestClock } from '../types.ts';

/** The list's filters (actors/customer/customer-list.ts CUSTOMER_LIST_FILTERS). */
const STATUSES = [
  { value: '', label: 'Every customer' },
  { value: 'ready', label: 'Ready for calls' },
  { value: 'blocked', label: 'Blocked from calling' },
  { value: 'prospect', label: 'Prospect' },
  { value: 'active', label: 'Active' },
  { value: 'paused', label: 'Paused' },
];

export default function Customers() {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const setStatus = (v: string) => setParams(v ? { status: v } : {}, { replace: true });
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title="Customers"
        description="The businesses you call for, with whether they can take calls now."
        actions={
          canWrite && (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              Create customer
            </button>
          )
        }
      />
      <div className="filters">
        <Select label="Show" name="status" value={status} onChange={(e) => setStatus(e.target.value)} options={STATUSES} />
      </div>
      <ListTable<CustomerRow>
        path="/customers"
        query={{ mode, status }}
        caption="Customers"
        empty={{ title: `No ${mode} customers yet`, body: canWrite ? 'Create one with “Create customer”.' : undefined }}
        columns={[
          { header: 'Name', cell: (c) => <Link to={`/customers/${c.id}`}>{c.name}</Link> },
          { header: 'Reference', cell: (c) => c.external_ref ?? '—' },
          { header: 'Country', cell: (c) => c.country },
          { header: 'Status', cell: (c) => <Badge status={c.status} /> },
          {
            header: 'Readiness',
            cell: (c) =>
              c.ready ? <Badge tone="good">Ready</Badge> : <Badge tone="wait">{c.blocker_count ? `${c.blocker_count} blocker${c.blocker_count === 1 ? '' : 's'}` : 'Not ready'}</Badge>,
          },
          { header: 'Created', cell: (c) => date(c.created_at) },
        ]}
      />
      {canWrite && <CreateCustomer isOpen={creating} onClose={() => setCreating(false)} />}
    </>
  );
}

function CreateCustomer({ isOpen, onClose }: { isOpen: boolean; onClose: () => void }) {
  const mode = useMode();
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const clocks = useQuery({ queryKey: ['/test_clocks', 'all'], queryFn: () => api.get<List<TestClock>>('/test_clocks', { limit: 100 }), enabled: isOpen && mode === 'test' });
  const create = useMutation({
    mutationFn: (body: Record<string, string>) => api.post<Customer>('/customers', { ...body, mode }),
    onSuccess: (c) => {
      void invalidate('/customers', '/overview');
      onClose();
      navigate(`/customers/${c.id}`);
    },
  });
  return (
    <Dialog title={`Create a ${mode} customer`} isOpen={isOpen} onClose={onClose}>
      <Form onSubmit={(form) => create.mutate(formValues(form))}>
        <Field label="Business name" name="name" required maxLength={200} autoFocus />
        <Field label="Your reference (optional)" name="external_ref" hint="Your own id for this customer; the API accepts it wherever it takes the customer's id." maxLength={255} />
        <div className="form-row">
          <Field label="Country" name="country" hint="Two letters, such as US." maxLength={2} />
          <Field label="Time zone" name="timezone" hint="Such as America/New_York." maxLength={64} />
        </div>
        <Field label="Website (optional)" name="website_url" type="url" />
        <Field label="Business phone (optional)" name="phone" type="tel" hint="In international form, such as +12025550101." />
        {mode === 'test' && (
          <Select
            label="Test clock (optional)"
            name="test_clock"
            hint="A customer on a test clock lives on the clock's time."
            options={[{ value: '', label: 'None: real time' }, ...rowsOf(clocks.data).map((c) => ({ value: c.id, label: c.name ?? c.id }))]}
          />
        )}
        <FormError error={create.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <Submit pending={create.isPending}>Create customer</Submit>
        </div>
      </Form>
    </Dialog>
  );
}
