import { Link } from 'react-router';
import { useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Field, Select } from '../ui/Form.tsx';
import { CustomerSelect } from '../ui/CustomerSelect.tsx';
import { PageHeader } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { dayToIso, useAddressFilters } from '../ui/data.ts';
import { dateTime, duration, words } from '../ui/format.ts';
import type { Call } from '../types.ts';

const STATUSES = ['queued', 'dialing', 'ringing', 'in_progress', 'completed', 'cancelled', 'expired', 'blocked'];
const OUTCOMES = [
  'appointment_booked',
  'not_interested',
  'call_back_later',
  'do_not_call',
  'voicemail',
  'fax',
  'time_limit',
  'completed',
  'no_answer',
  'busy',
  'failed',
  'cancelled',
  'expired',
  'do_not_call_listed',
  'consent_expired',
  'consent_required',
  'requested_call_only',
  'no_redial_after_hang_up',
];

/** Calls, filtered by customer, status, outcome and date; the filters live in the address so they can be shared. */
export default function Calls() {
  const mode = useMode();
  const { get: filter, set } = useAddressFilters();
  return (
    <>
      <PageHeader title="Calls" description="Every call and call request in this mode, newest first." />
      <div className="filters" role="search" aria-label="Filter calls">
        <CustomerSelect value={filter('customer_id')} onChange={(v) => set('customer_id', v)} />
        <Select label="Status" name="status" value={filter('status')} onChange={(e) => set('status', e.target.value)} options={[{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: words(s) }))]} />
        <Select label="Outcome" name="outcome" value={filter('outcome')} onChange={(e) => set('outcome', e.target.value)} options={[{ value: '', label: 'Any outcome' }, ...OUTCOMES.map((s) => ({ value: s, label: words(s) }))]} />
        <Field label="From" type="date" name="from" value={filter('from')} onChange={(e) => set('from', e.target.value)} />
        <Field label="To" type="date" name="to" value={filter('to')} onChange={(e) => set('to', e.target.value)} />
      </div>
      <ListTable<Call>
        path="/calls"
        query={{ mode, customer_id: filter('customer_id'), status: filter('status'), outcome: filter('outcome'), from: dayToIso(filter('from')), to: dayToIso(filter('to'), true) }}
        caption="Calls"
        empty={{ title: 'No calls match', body: 'Place a call from a customer’s page.' }}
        columns={[
          { header: 'Called', cell: (c) => <Link to={`/calls/${c.id}`}>{c.business_name ?? c.phone}</Link> },
          { header: 'Number', cell: (c) => c.phone },
          { header: 'Status', cell: (c) => <Badge status={c.status} /> },
          { header: 'Outcome', cell: (c) => (c.outcome ? <Badge status={c.outcome} tone={c.outcome === 'appointment_booked' ? 'good' : 'neutral'} /> : c.waiting_reason ? <span className="muted">Waiting: {words(c.waiting_reason)}</span> : '—') },
          { header: 'Duration', cell: (c) => (c.finished ? duration(c.duration_seconds) : '—'), numeric: true },
          { header: 'Created', cell: (c) => dateTime(c.created_at) },
        ]}
      />
    </>
  );
}
