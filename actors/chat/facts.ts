import type { Queryable } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { isFinished } from '../call/views.ts';
import { dayKey } from '../../money/rules/pricing.ts';
import { minutesAndSeconds } from '../../runtime/types.ts';

/**
 * The facts block: everything the assistant knows, measured from one customer's calls of the
 * last 30 days. `computeFacts` and `formatFacts` are pure; `loadFacts` is the one database read,
 * and it reads that one customer's calls only, so another business's figures cannot reach the
 * assistant.
 */

export const FACTS_DAYS = 30;

/** Outcomes of a call a person answered (actors/call/outcome.ts); the rest never connected. */
export const CONNECTED_OUTCOMES = new Set(['appointment_booked', 'not_interested', 'call_back_later', 'do_not_call', 'time_limit', 'completed']);

export type FactCall = Pick<CallRow, 'status' | 'outcome' | 'dialed_at' | 'duration_seconds' | 'appointment_id'>;

export interface ChatFacts {
  /** The business the facts are about (its brand name when it has one). */
  business: string;
  from: Date;
  to: Date;
  requested: number;
  finished: number;
  /** Finished calls that were dialled (the connect rate's denominator). */
  dialled: number;
  /** Dialled calls a person answered. */
  connected: number;
  /** Whole percent; null when nothing was dialled (not measured). */
  connectRatePercent: number | null;
  /** Whole seconds, over connected calls; null when none connected (not measured). */
  averageConnectedSeconds: number | null;
  /** Finished calls by outcome, most frequent first. */
  outcomes: { outcome: string; count: number }[];
  appointments: number;
}

export function computeFacts(calls: FactCall[], business: string, now: Date): ChatFacts {
  const finished = calls.filter((c) => isFinished(c.status));
  const dialled = finished.filter((c) => c.dialed_at !== null);
  const connected = dialled.filter((c) => c.outcome !== null && CONNECTED_OUTCOMES.has(c.outcome));
  const counts = new Map<string, number>();
  for (const c of finished) if (c.outcome) counts.set(c.outcome, (counts.get(c.outcome) ?? 0) + 1);
  const seconds = connected.reduce((sum, c) => sum + (c.duration_seconds ?? 0), 0);
  return {
    business,
    from: new Date(now.getTime() - FACTS_DAYS * 86_400_000),
    to: now,
    requested: calls.length,
    finished: finished.length,
    dialled: dialled.length,
    connected: connected.length,
    connectRatePercent: dialled.length ? Math.round((connected.length / dialled.length) * 100) : null,
    averageConnectedSeconds: connected.length ? Math.round(seconds / connected.length) : null,
    outcomes: [...counts].map(([outcome, count]) => ({ outcome, count })).sort((a, b) => b.count - a.count || a.outcome.localeCompare(b.outcome)),
    appointments: calls.filter((c) => c.appointment_id !== null).length,
  };
}

/** The block as the model reads it: every figure it may state, and nothing else. */
export function formatFacts(f: ChatFacts): string {
  const lines = [
    `FACTS for ${f.business}: calls requested from ${dayKey(f.from)} to ${dayKey(f.to)} (the last ${FACTS_DAYS} days). These are the only figures measured.`,
    `- Calls requested: ${f.requested}`,
    `- Calls finished: ${f.finished}`,
    `- Calls dialled: ${f.dialled}`,
    `- Calls connected (answered by a person): ${f.connected}`,
    f.connectRatePercent === null
      ? '- Connect rate: not measured (no call was dialled)'
      : `- Connect rate: ${f.connectRatePercent}% (${f.connected} of ${f.dialled} dialled calls)`,
    f.averageConnectedSeconds === null
      ? '- Average length of a connected call: not measured (no call connected)'
      : `- Average length of a connected call: ${f.averageConnectedSeconds} seconds (${minutesAndSeconds(f.averageConnectedSeconds)})`,
    f.outcomes.length ? `- Outcomes: ${f.outcomes.map((o) => `${o.outcome} ${o.count}`).join(', ')}` : '- Outcomes: none yet',
    `- Appointments booked: ${f.appointments}`,
  ];
  return lines.join('\n');
}

/** The facts of one customer at `now`, read from its own calls only. */
export async function loadFacts(db: Queryable, customer: { id: string; business: string }, now: Date): Promise<ChatFacts> {
  const since = new Date(now.getTime() - FACTS_DAYS * 86_400_000);
  const calls = await createCallRepository(db).forCustomerSince(customer.id, since);
  return computeFacts(calls, customer.business, now);
}
