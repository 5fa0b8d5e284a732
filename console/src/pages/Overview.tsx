import { lazy, Suspense } from 'react';
import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { date, money, words } from '../ui/format.ts';
import { Empty, Loading, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { DataTable } from '../ui/Table.tsx';
import type { Overview as OverviewData } from '../types.ts';

const CallsChart = lazy(() => import('../ui/CallsChart.tsx'));

const STAGE_WORDS: Record<string, string> = {
  ok: 'Balance is fine',
  below_25_percent: 'Below 25% of your usual top-up',
  below_10_percent: 'Below 10% of your usual top-up',
  zero: 'Empty: calls are refused',
};

function CapMeter({ label, spent, cap }: { label: string; spent: number; cap: number | null }) {
  const share = cap ? Math.min(1, spent / cap) : 0;
  return (
    <div className="meter">
      <div className="meter-head">
        <span>{label}</span>
        <span>
          {money(spent)} {cap !== null ? `of ${money(cap)}` : '(no cap)'}
        </span>
      </div>
      {cap !== null && <progress max={cap} value={Math.min(spent, cap)} aria-label={`${label}: ${Math.round(share * 100)}% of the cap`} />}
    </div>
  );
}

export default function Overview() {
  const mode = useMode();
  const overview = useQuery({ queryKey: ['/overview', mode], queryFn: () => api.get<OverviewData>('/overview', { mode }) });
  return (
    <>
      <PageHeader title="Overview" />
      <QueryState query={overview}>
        {(o) => (
          <>
            {o.balance && o.spend ? (
              <div className="cards">
                <div className="card">
                  <p className="card-label">Available balance</p>
                  <p className="card-value">{money(o.balance.available_cents, o.balance.currency)}</p>
                  <p className="muted">
                    Balance {money(o.balance.balance_cents, o.balance.currency)}; held for running calls {money(o.balance.reserved_cents, o.balance.currency)}
                  </p>
                  {o.low_balance_stage && (
                    <Badge status={o.low_balance_stage} tone={o.low_balance_stage === 'ok' ? 'good' : o.low_balance_stage === 'zero' ? 'bad' : 'wait'}>
                      {STAGE_WORDS[o.low_balance_stage] ?? words(o.low_balance_stage)}
                    </Badge>
                  )}
                </div>
                <div className="card">
                  <p className="card-label">Spend against caps</p>
                  <CapMeter label="Today" spent={o.spend.today_cents} cap={o.spend.daily_cap_cents} />
                  <CapMeter label="This month" spent={o.spend.month_cents} cap={o.spend.monthly_cap_cents} />
                </div>
              </div>
            ) : (
              <p className="muted">Your role does not show money: balance and spend are on the Billing page for owners, admins, billing and viewers.</p>
            )}
            <Section title="Calls in the last 30 days" id="calls-by-day">
              <Suspense fallback={<Loading what="Drawing the chart" />}>
                <CallsChart days={o.calls_by_day} />
              </Suspense>
              <p className="chart-legend" aria-hidden="true">
                <span className="legend legend-placed">Placed</span> <span className="legend legend-connected">Connected</span>{' '}
                <span className="legend legend-appointments">Appointments</span>
              </p>
              <details className="chart-table">
                <summary>The same numbers as a table</summary>
                <DataTable
                  caption="Calls by day, last 30 days"
                  rowKey={(d) => d.date}
                  rows={o.calls_by_day}
                  columns={[
                    { header: 'Day', cell: (d) => date(`${d.date}T12:00:00Z`) },
                    { header: 'Placed', cell: (d) => d.placed, numeric: true },
                    { header: 'Connected', cell: (d) => d.connected, numeric: true },
                    { header: 'Appointments', cell: (d) => d.appointments, numeric: true },
                  ]}
                />
              </details>
            </Section>
            <Section title={`Customers blocked from calling (${o.blocked_customer_count})`} id="blocked">
              {o.blocked_customers.length === 0 ? (
                <Empty title="No customer is blocked">Every customer in this mode can take calls.</Empty>
              ) : (
                <ul className="blocked-list">
                  {o.blocked_customers.map((c) => (
                    <li key={c.id}>
                      <Link to={`/customers/${c.id}`}>{c.name}</Link>
                      <ul>
                        {c.blockers.map((b) => (
                          <li key={b.code}>
                            {b.message} <span className="muted">(waiting on {b.waiting_on === 'reseller' ? 'you' : b.waiting_on})</span>
                          </li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ul>
              )}
              {o.blocked_customer_count > o.blocked_customers.length && (
                <p>
                  <Link to="/customers?status=blocked">All {o.blocked_customer_count} blocked customers</Link>
                </p>
              )}
            </Section>
          </>
        )}
      </QueryState>
    </>
  );
}
