import { countDiallerDecision } from '../../runtime/metrics.ts';
import { BLOCKER_CODES } from '../customer/readiness.ts';

/**
 * The dialler's decisions as the operator's metrics count them (`switchboard_dialler_decisions_total`):
 * the reason as the API says it, and a group an operator reads at a glance.
 */
export type DecisionGroup = 'dialled' | 'window_closed' | 'dnc' | 'consent' | 'balance' | 'caps' | 'capacity' | 'readiness' | 'deadline' | 'research' | 'other';

const GROUPS: Readonly<Record<string, DecisionGroup>> = {
  dialled: 'dialled',
  outside_calling_window: 'window_closed',
  emergency_closure: 'window_closed',
  do_not_call_listed: 'dnc',
  consent_expired: 'consent',
  consent_required: 'consent',
  requested_call_only: 'consent',
  no_redial_after_hang_up: 'consent',
  insufficient_balance: 'balance',
  spend_cap_daily: 'caps',
  spend_cap_monthly: 'caps',
  customer_spend_cap_daily: 'caps',
  customer_spend_cap_monthly: 'caps',
  frequency_cap: 'caps',
  platform_at_capacity: 'capacity',
  concurrency_limit: 'capacity',
  expired: 'deadline',
  researching: 'research',
  not_ready: 'readiness',
  ...Object.fromEntries(BLOCKER_CODES.filter((code) => code !== 'insufficient_balance').map((code) => [code, 'readiness' as const])),
};

/** The group of a decision's reason; a reason not listed is `other`. */
export function decisionGroup(reason: string): DecisionGroup {
  return Object.hasOwn(GROUPS, reason) ? GROUPS[reason]! : 'other';
}

/** Counts one decision of the dialler. */
export function countDecision(decision: 'dial' | 'wait' | 'end', reason: string): void {
  countDiallerDecision(decision, reason, decisionGroup(reason));
}
