import type { LineType } from '../../runtime/types.ts';

/**
 * What a simulated call does, chosen by the last digit of the called number (README). Shared
 * by the simulated carrier (the callee's side) and the scripted bridge (the agent's side). Pure.
 * A machine (last digit 4) is told apart by the second-to-last digit: 7 a machine whose greeting
 * ends in silence, 8 a fax, 9 a machine detected at its start, any other a machine whose greeting
 * ends with a beep.
 */
export interface Scenario {
  digit: number;
  /** Final carrier status. */
  status: 'completed' | 'no-answer' | 'busy' | 'failed';
  answered: boolean;
  /** The answering-machine verdict, reported asynchronously after the answer when detection was asked for. */
  answeredBy: 'human' | 'machine_start' | 'machine_end_beep' | 'machine_end_silence' | 'fax' | null;
  /** Length the carrier reports, seconds (wall time is much shorter). */
  durationSeconds: number;
  /** What the agent does before hanging up. */
  agent: 'not_interested' | 'book_appointment' | 'do_not_call' | 'talk_until_limit' | 'call_back_later' | null;
}

const TABLE: Record<number, Omit<Scenario, 'digit'>> = {
  0: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 60, agent: 'not_interested' },
  1: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 180, agent: 'book_appointment' },
  2: { status: 'no-answer', answered: false, answeredBy: null, durationSeconds: 0, agent: null },
  3: { status: 'busy', answered: false, answeredBy: null, durationSeconds: 0, agent: null },
  // A machine: the agent says nothing of its own (the machine verdict decides, call-machine.ts).
  4: { status: 'completed', answered: true, answeredBy: 'machine_end_beep', durationSeconds: 30, agent: null },
  5: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 45, agent: 'do_not_call' },
  6: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 1200, agent: 'talk_until_limit' },
  7: { status: 'failed', answered: false, answeredBy: null, durationSeconds: 0, agent: null },
  8: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 90, agent: 'call_back_later' },
  9: { status: 'completed', answered: true, answeredBy: 'human', durationSeconds: 90, agent: 'call_back_later' },
};

/** Machines by the second-to-last digit (last digit 4). */
const MACHINES: Record<string, Pick<Scenario, 'answeredBy' | 'durationSeconds'>> = {
  '7': { answeredBy: 'machine_end_silence', durationSeconds: 30 },
  '8': { answeredBy: 'fax', durationSeconds: 5 },
  '9': { answeredBy: 'machine_start', durationSeconds: 10 },
};

export function scenarioFor(e164: string): Scenario {
  const digits = e164.replace(/\D/g, '');
  const digit = Number(digits.slice(-1) || '0');
  const machine = digit === 4 ? MACHINES[digits.slice(-2, -1)] : undefined;
  return { digit, ...TABLE[digit], ...machine };
}

/**
 * The line type of a number in test mode (README, docs/api.md), by the fourth digit from the end
 * (the first of a NANP line number): 9 mobile, 8 residential landline, 7 VoIP, anything else a
 * business landline. The fake Twilio's Lookup answers by the same rule, so test and live mode agree.
 */
export function simulatedLineType(e164: string): LineType {
  const digits = e164.replace(/\D/g, '');
  switch (digits.length >= 4 ? digits[digits.length - 4] : '') {
    case '9':
      return 'mobile';
    case '8':
      return 'landline';
    case '7':
      return 'voip';
    default:
      return 'business_landline';
  }
}

/**
 * Test mode's caller ID verification (issue 14): a number ending in 9 fails, any other is
 * verified, as call outcomes go by the last digit. The fake Twilio's default follows the same rule.
 */
export function simulatedCallerIdVerifies(e164: string): boolean {
  return !e164.endsWith('9');
}
