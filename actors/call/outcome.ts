import type { CarrierCallStatus } from '../../telephony/carrier.ts';
import { momentIn, summaryWords, type SummaryMoment } from './summary-words.ts';

/**
 * How a call ended, decided from what the carrier reported and what happened on the call. Pure.
 * Every dialled call ends with status `completed`; `outcome` says how (docs/api.md).
 */

export type CallOutcome =
  | 'appointment_booked'
  | 'not_interested'
  | 'call_back_later'
  | 'do_not_call'
  | 'voicemail'
  | 'fax'
  | 'time_limit'
  | 'completed'
  | 'no_answer'
  | 'busy'
  | 'failed';

export interface CallFacts {
  carrierStatus: CarrierCallStatus;
  answeredBy: string | null;
  durationSeconds: number;
  appointmentBooked: boolean;
  doNotCall: boolean;
  /** The reason the agent gave when it ended the call (`end_call` tool), if it did. */
  endReason: string | null;
  hitTimeLimit: boolean;
}

export const TIME_LIMIT_SECONDS = 1_200;

export function decideOutcome(f: CallFacts): CallOutcome {
  switch (f.carrierStatus) {
    case 'no-answer':
      return 'no_answer';
    case 'busy':
      return 'busy';
    case 'failed':
    case 'canceled':
      return 'failed';
    default:
      break;
  }
  if (f.appointmentBooked) return 'appointment_booked';
  if (f.doNotCall) return 'do_not_call';
  // A fax machine answered (answering-machine detection): hung up at once.
  if (f.answeredBy === 'fax' || f.endReason === 'fax') return 'fax';
  if (f.answeredBy?.startsWith('machine') || f.endReason === 'voicemail') return 'voicemail';
  if (f.hitTimeLimit || f.durationSeconds >= TIME_LIMIT_SECONDS) return 'time_limit';
  if (f.endReason === 'not_interested') return 'not_interested';
  if (f.endReason === 'call_back_later') return 'call_back_later';
  return 'completed';
}

/**
 * One plain sentence for the reseller, in the customer's calling language (summary-words.ts;
 * English for any other). It says what happened, never how the agent decided (no scoring,
 * objection paths or research findings), and gives the call's real length (a 90-second call
 * "ended after 1 min 30 s"), not the billed minutes. With `callback` (the time the callee asked
 * to be called back, call-summary.ts), a call_back_later or completed call says it.
 */
export function summarise(
  outcome: CallOutcome,
  durationSeconds: number,
  appointment: SummaryMoment | null,
  language?: string | null,
  callback: { at: Date; zone: string } | null = null,
): string {
  const w = summaryWords(language);
  const length = Math.max(0, durationSeconds);
  switch (outcome) {
    case 'appointment_booked':
      return w.appointmentBooked(appointment ? momentIn(w, appointment) : null, appointment?.timezone ?? null, length);
    case 'not_interested':
      return w.notInterested(length);
    case 'call_back_later':
      return callback ? w.callBackAt(w.when(callback.at, callback.zone), callback.zone, length) : w.callBackLater(length);
    case 'do_not_call':
      return w.doNotCall;
    case 'voicemail':
      return w.voicemail;
    case 'fax':
      return w.fax;
    case 'time_limit':
      return w.timeLimit;
    case 'completed':
      return callback ? w.callBackAt(w.when(callback.at, callback.zone), callback.zone, length) : w.completed(length);
    case 'no_answer':
      return w.noAnswer;
    case 'busy':
      return w.busy;
    case 'failed':
      return w.failed;
  }
}
