import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Select } from '../ui/Form.tsx';
import { ErrorNote, Loading, PageHeader, Section } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { dateTime } from '../ui/format.ts';
import type { AppointmentRow, List } from '../types.ts';

type View = 'list' | 'week' | 'month';
type ZoneChoice = 'local' | 'customer' | 'UTC';

const localZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The zone an appointment is shown in. */
function zoneFor(a: AppointmentRow, choice: ZoneChoice): string {
  if (choice === 'UTC') return 'UTC';
  if (choice === 'customer') return a.customer_timezone ?? a.timezone;
  return localZone;
}

/** YYYY-MM-DD of an instant in a zone. */
function dayIn(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));
}

function timeIn(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat(undefined, { timeZone, hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));
}

const ymd = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** The days shown: the week (Monday first) or the month's weeks around `anchor`. */
function daysOf(view: 'week' | 'month', anchor: Date): Date[] {
  const start = new Date(anchor.getFullYear(), anchor.getMonth(), view === 'month' ? 1 : anchor.getDate());
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  const end = view === 'week' ? new Date(start.getFullYear(), start.getMonth(), start.getDate() + 7) : new Date(anchor.getFullYear(), anchor.getMonth() + 1, 1);
  if (view === 'month') end.setDate(end.getDate() + ((7 - ((end.getDay() + 6) % 7)) % 7));
  const days: Date[] = [];
  for (const d = new Date(start); d < end; d.setDate(d.getDate() + 1)) days.push(new Date(d));
  return days;
}

export default function Appointments() {
  const mode = useMode();
  const [view, setView] = useState<View>('list');
  const [zone, setZone] = useState<ZoneChoice>('customer');
  const [anchor, setAnchor] = useState(() => new Date());
  return (
    <>
      <PageHeader title="Appointments" description="Meetings booked on your customers' calls." />
      <div className="toolbar">
        <div className="segmented" role="group" aria-label="View">
          {(['list', 'week', 'month'] as const).map((v) => (
            <button key={v} type="button" className="button button-small" aria-pressed={view === v} onClick={() => setView(v)}>
              {v === 'list' ? 'List' : v === 'week' ? 'Week' : 'Month'}
            </button>
          ))}
        </div>
        <Select
          label="Show times in"
          name="zone"
          value={zone}
          onChange={(e) => setZone(e.target.value as ZoneChoice)}
          options={[
            { value: 'customer', label: "Each customer's time zone" },
            { value: 'local', label: `Your time zone (${localZone})` },
            { value: 'UTC', label: 'UTC' },
          ]}
        />
      </div>
      {view === 'list' ? (
        <ListTable<AppointmentRow>
          path="/appointments"
          query={{ mode }}
          caption="Appointments"
          empty={{ title: 'No appointments yet', body: 'They appear here when a call books one.' }}
          columns={[
            { header: 'When', cell: (a) => dateTime(a.start_at, zoneFor(a, zone)) },
            { header: 'Time zone', cell: (a) => zoneFor(a, zone) },
            { header: 'With', cell: (a) => a.attendee_name ?? '—' },
            { header: 'Customer', cell: (a) => <Link to={`/customers/${a.customer_id}`}>{a.customer_name ?? a.customer_id}</Link> },
            { header: 'Call', cell: (a) => <Link to={`/calls/${a.call_id}`}>Open the call</Link> },
            { header: 'Status', cell: (a) => <Badge status={a.status} /> },
          ]}
        />
      ) : (
        <Calendar view={view} anchor={anchor} setAnchor={setAnchor} zone={zone} />
      )}
    </>
  );
}

function Calendar({ view, anchor, setAnchor, zone }: { view: 'week' | 'month'; anchor: Date; setAnchor: (d: Date) => void; zone: ZoneChoice }) {
  const mode = useMode();
  const days = useMemo(() => daysOf(view, anchor), [view, anchor]);
  // A day of margin either side: an appointment's day depends on the zone it is shown in.
  const from = new Date(days[0].getTime() - 86_400_000).toISOString();
  const to = new Date(days[days.length - 1].getTime() + 2 * 86_400_000).toISOString();
  const list = useQuery({ queryKey: ['/appointments', mode, from, to], queryFn: () => api.get<List<AppointmentRow>>('/appointments', { mode, from, to, limit: 200 }) });
  const byDay = new Map<string, AppointmentRow[]>();
  for (const a of list.data?.data ?? []) {
    const key = dayIn(a.start_at, zoneFor(a, zone));
    byDay.set(key, [...(byDay.get(key) ?? []), a]);
  }
  const today = ymd(new Date());
  const step = (n: number) => {
    const d = new Date(anchor);
    if (view === 'week') d.setDate(d.getDate() + 7 * n);
    else d.setMonth(d.getMonth() + n, 1);
    setAnchor(d);
  };
  const title = view === 'week' ? `Week of ${days[0].toLocaleDateString(undefined, { dateStyle: 'medium' })}` : anchor.toLocaleDateString(undefined, { month: 'long', year: 'numeric' });
  return (
    <Section
      title={title}
      id="calendar"
      actions={
        <>
          <button type="button" className="button button-small" onClick={() => step(-1)}>
            Previous
          </button>
          <button type="button" className="button button-small" onClick={() => setAnchor(new Date())}>
            Today
          </button>
          <button type="button" className="button button-small" onClick={() => step(1)}>
            Next
          </button>
        </>
      }
    >
      <ErrorNote error={list.error} />
      {list.isPending && <Loading />}
      {list.data?.has_more && <p className="muted">More than 200 appointments in this range: the list view shows them all.</p>}
      <div className="calendar" role="table" aria-label={title}>
        <div role="row" className="calendar-row">
          {['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => (
            <div key={d} role="columnheader" className="calendar-head">
              {d}
            </div>
          ))}
        </div>
        {Array.from({ length: days.length / 7 }, (_, w) => (
          <div role="row" key={w} className="calendar-row">
            {days.slice(w * 7, w * 7 + 7).map((d) => {
              const key = ymd(d);
              const items = byDay.get(key) ?? [];
              const other = view === 'month' && d.getMonth() !== anchor.getMonth();
              return (
                <div key={key} role="cell" className={`calendar-day${other ? ' other' : ''}${key === today ? ' today' : ''}`} aria-label={`${d.toLocaleDateString(undefined, { dateStyle: 'full' })}: ${items.length} appointment${items.length === 1 ? '' : 's'}`}>
                  <span className="day-number" aria-hidden="true">
                    {d.getDate()}
                  </span>
                  {items.map((a) => (
                    <Link key={a.id} className="calendar-event" to={`/calls/${a.call_id}`} title={`${dateTime(a.start_at, zoneFor(a, zone))} ${a.attendee_name ?? ''}`}>
                      {timeIn(a.start_at, zoneFor(a, zone))} {a.attendee_name ?? a.customer_name ?? ''}
                    </Link>
                  ))}
                </div>
              );
            })}
          </div>
        ))}
      </div>
    </Section>
  );
}
