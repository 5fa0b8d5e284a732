import { words } from './format.ts';

const GOOD = new Set(['active', 'ready', 'live', 'completed', 'connected', 'succeeded', 'delivered', 'enabled', 'approved', 'accepted', 'booked', 'done', 'verified', 'passed', 'signed', 'yes']);
const BAD = new Set(['failed', 'blocked', 'revoked', 'disabled', 'rejected', 'suspended', 'cancelled', 'canceled', 'expired', 'refused', 'no', 'payment_due', 'not_passed']);
const WAIT = new Set(['pending', 'queued', 'scheduled', 'building', 'verifying', 'in_progress', 'dialling', 'ringing', 'waiting', 'test', 'retrying', 'replaced', 'hosting_due', 'prospect']);

export type Tone = 'good' | 'bad' | 'wait' | 'neutral';

export function toneOf(status: string): Tone {
  const s = status.toLowerCase();
  if (GOOD.has(s)) return 'good';
  if (BAD.has(s)) return 'bad';
  if (WAIT.has(s)) return 'wait';
  return 'neutral';
}

/** A status in words with a colour that only repeats what the words say. */
export function Badge({ status, tone, children }: { status?: string | null; tone?: Tone; children?: React.ReactNode }) {
  const label = children ?? words(status ?? '');
  return <span className={`badge badge-${tone ?? toneOf(status ?? '')}`}>{label}</span>;
}
