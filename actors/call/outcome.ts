import type { CarrierCallStatus } from '../../telephony/carrier.ts';
import { minutesAndSeconds } from '../../runtime/types.ts';

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
 * One plain sentence for the reseller. It says what happened, never how the agent decided
 * (no scoring, objection paths or research findings), and gives the call's real length (a
 * 90-second call "ended after 1 min 30 s"), not the billed minutes.
 */
export function summarise(outcome: CallOutcome, durationSeconds: number, appointment: { startLocal: string; timezone: string } | null): string {
  const length = durationSeconds > 0 ? ` after ${minutesAndSeconds(durationSeconds)}` : '';
  switch (outcome) {
    case 'appointment_booked':
      return `The call was answered and a meeting was booked for ${appointment?.startLocal ?? 'a time agreed on the call'} (${appointment?.timezone ?? 'customer time'}); it ended${length}.`;
    case 'not_interested':
      return `The call was answered; the prospect was not interested. It ended${length}.`;
    case 'call_back_later':
      return `The call was answered; the prospect asked to be called back later. It ended${length}.`;
    case 'do_not_call':
      return `The call was answered; the prospect asked not to be called again and the number was added to the do-not-call list.`;
    case 'voicemail':
      // Not "no message was left": the agent may leave a short one (the scripted agent does).
      return 'The call reached voicemail.';
    case 'fax':
      return 'A fax machine answered the call.';
    case 'time_limit':
      return 'The call was answered and ended at the 20-minute limit.';
    case 'completed':
      return `The call was answered and ended${length}.`;
    case 'no_answer':
      return 'Nobody answered the call.';
    case 'busy':
      return 'The line was busy.';
    case 'failed':
      return 'The call could not be connected.';
  }
}
