/**
 * SpeechBridge adapter that plays the agent's side of a simulated call (telephony/simulated/
 * scenarios.ts) in a fraction of a second, from `takeOver()` (the opening has played, or is about
 * to: the call holds what the agent says until it has):
 * a few lines of transcript with tone audio, and the tool calls the scenario ends with. For test mode and machines without an
 * OpenAI key; the simulated carrier plays the callee's side.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import { toneFrames } from '../mulaw.ts';
import { scenarioFor, type Scenario } from '../simulated/scenarios.ts';
import { sayWhen, scriptedWordsFor, type SaidSlot } from './scripted-words.ts';
import type { AgentSetup, BridgeConnection, BridgeHandlers, SpeechBridge } from '../speech-bridge.ts';

export interface ScriptedBridgeOptions {
  /** Source of "now" for the appointment it books. */
  clock?: Clock;
  /** Wall time between steps, ms (default 10), so the call sees events arrive one by one. */
  stepDelayMs?: number;
  log?: Logger;
}

/** The appointment the scripted agent books: next weekday at this local hour, this long. */
const APPOINTMENT_HOUR = 10;
const APPOINTMENT_MINUTES = 30;
/** Slots the scripted agent tries before giving up on a booking (each refusal offers the next ones). */
const BOOKING_TRIES = 5;
/** Agent "speech": 100 ms of a 440 Hz tone per utterance, computed once. */
const UTTERANCE_FRAMES = toneFrames(100, 440);
/** How often the never-ending scenario says something, wall ms. */
const TALK_INTERVAL_MS = 100;

export class ScriptedBridge implements SpeechBridge {
  readonly name = 'scripted' as const;

  constructor(private readonly opts: ScriptedBridgeOptions = {}) {}

  async connect(setup: AgentSetup, handlers: BridgeHandlers): Promise<BridgeConnection> {
    const controller = new AbortController();
    const run = new ScriptedRun(setup, handlers, scenarioFor(setup.to), controller.signal, this.opts);
    const log = this.opts.log;
    let started = false;
    return {
      // The opening has played (or is about to; the call holds the words until it has): the script starts now (it never says the opening itself).
      takeOver() {
        if (started || controller.signal.aborted) return;
        started = true;
        run.play().catch((err) => {
          if (controller.signal.aborted) return; // close() interrupted a step: the expected way out
          log?.error({ err }, 'scripted bridge failed');
          handlers.onError(err instanceof Error ? err : new Error(String(err)));
        });
      },
      sendAudio() {
        /* the script does not listen */
      },
      markPlayed() {
        /* nor track playback */
      },
      close() {
        controller.abort();
      },
    };
  }
}

class ScriptedRun {
  private readonly stepDelayMs: number;
  private readonly clock: Clock;
  private readonly log: Logger | undefined;

  constructor(
    private readonly setup: AgentSetup,
    private readonly handlers: BridgeHandlers,
    private readonly scenario: Scenario,
    private readonly signal: AbortSignal,
    opts: ScriptedBridgeOptions,
  ) {
    this.stepDelayMs = opts.stepDelayMs ?? 10;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
  }

  async play(): Promise<void> {
    const agent = this.scenario.agent;
    if (agent === null) return;
    // The agent speaks the calling language (scripted-words.ts); the simulated callee speaks English.
    const words = scriptedWordsFor(this.setup.language);
    // The opening (setup.greeting) has been played by the call before takeOver(): the script goes on from its question.
    switch (agent) {
      case 'not_interested':
        await this.say('callee', "Sorry, I'm not interested.");
        await this.say('agent', words.notInterested);
        await this.tool('end_call', { reason: 'not_interested' });
        return;
      case 'book_appointment': {
        await this.say('callee', 'Yes, tell me more.');
        // The slots the business has free (issue 24); without any (a harness that answers nothing), the next weekday at ten.
        const found = await this.tool('find_free_slots', {});
        let slot: SaidSlot = slotsOf(found, 'slots')[0] ?? { start_at: nextWeekdayAt(this.clock.now(), this.setup.timezone, APPOINTMENT_HOUR).toISOString() };
        // The agent says the slot it books, as the tool said it, in the calling language.
        const when = (s: SaidSlot) => sayWhen(this.setup.language, s, this.setup.timezone);
        await this.say('agent', words.proposeMeeting(APPOINTMENT_MINUTES, when(slot)));
        await this.say('callee', 'Yes, that works. My name is Pat Example.');
        const booking = { attendee_name: 'Pat Example', notes: 'Demo of the service' };
        let answer = await this.tool('book_appointment', { start_at: slot.start_at, ...booking });
        // Taken a moment ago by another call: the agent offers the next slot and books it (a few times at most).
        for (let tries = 1; tries < BOOKING_TRIES && !isBooked(answer); tries++) {
          const next = slotsOf(answer, 'next_slots')[0];
          if (!next) break;
          slot = next;
          await this.say('agent', words.slotTaken(when(slot)));
          await this.say('callee', 'Yes, that works too.');
          answer = await this.tool('book_appointment', { start_at: slot.start_at, ...booking });
        }
        await this.say('agent', isBooked(answer) ? words.booked(when(slot)) : words.notBooked);
        await this.tool('end_call', { reason: 'appointment_booked' });
        return;
      }
      case 'do_not_call':
        await this.say('callee', 'Please do not call me again.');
        await this.say('agent', words.noMoreCalls);
        await this.tool('mark_do_not_call', { reason: 'asked not to be called again' });
        await this.tool('end_call', { reason: 'do_not_call' });
        return;
      case 'call_back_later':
        await this.say('callee', "I'm busy right now, call me back later.");
        await this.say('agent', words.callBackLater);
        await this.tool('end_call', { reason: 'call_back_later' });
        return;
      case 'talk_until_limit':
        await this.say('callee', 'Tell me more.');
        // Ends only when the call closes the bridge (its time limit); the abort breaks the loop.
        for (let turn = 1; ; turn++) {
          await this.say('agent', words.moreToSay(turn), TALK_INTERVAL_MS);
        }
      default: {
        const never: never = agent;
        throw new Error(`unhandled scenario ${String(never)}`);
      }
    }
  }

  /** One utterance: its transcript line and, for the agent, some audio. */
  private async say(role: 'agent' | 'callee', text: string, delayMs = this.stepDelayMs): Promise<void> {
    await this.pause(delayMs);
    if (role === 'agent') for (const frame of UTTERANCE_FRAMES) this.handlers.onAudio(frame);
    this.handlers.onTranscript(role, text);
  }

  /** Calls a tool and gives back its result (undefined when it failed). */
  private async tool(name: string, args: Record<string, unknown>): Promise<unknown> {
    await this.pause(this.stepDelayMs);
    try {
      return await this.handlers.onToolCall(name, args);
    } catch (err) {
      // A real agent would hear the error and carry on; the script does the same.
      if (this.signal.aborted) throw err;
      this.log?.warn({ err, tool: name }, 'scripted tool call failed; continuing');
      return undefined;
    }
  }

  /** Waits, and throws AbortError once close() was called, which ends the script. */
  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.signal });
  }
}

/** The slots with a `start_at` in a tool result's `key` list (find_free_slots' slots, book_appointment's next_slots). */
function slotsOf(result: unknown, key: 'slots' | 'next_slots'): SaidSlot[] {
  const list = typeof result === 'object' && result !== null ? (result as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((s): SaidSlot[] => {
    const o = (typeof s === 'object' && s !== null ? s : {}) as Record<string, unknown>;
    if (typeof o.start_at !== 'string') return [];
    return [{ start_at: o.start_at, says: typeof o.says === 'string' ? o.says : undefined, timezone: typeof o.timezone === 'string' ? o.timezone : undefined }];
  });
}

/** Whether book_appointment's answer is a booking. */
const isBooked = (answer: unknown): boolean => typeof answer === 'object' && answer !== null && (answer as { booked?: unknown }).booked === true;

/**
 * The instant of `hour`:00 local time in `timeZone` on the first Monday–Friday after `now`'s
 * local date. Pure.
 */
export function nextWeekdayAt(now: Date, timeZone: string, hour: number): Date {
  const today = localParts(now, timeZone);
  let day = Date.UTC(today.year, today.month - 1, today.day);
  do day += 86_400_000;
  while ([0, 6].includes(new Date(day).getUTCDay()));
  const d = new Date(day);
  return zonedTimeToInstant(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), hour, timeZone);
}

function localParts(at: Date, timeZone: string) {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const parts = Object.fromEntries(fmt.formatToParts(at).map((p) => [p.type, Number(p.value)]));
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** How far the zone's wall clock is ahead of UTC at `at`, ms. */
function zoneOffsetMs(at: Date, timeZone: string): number {
  const p = localParts(at, timeZone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(at.getTime() / 1000) * 1000;
}

function zonedTimeToInstant(year: number, month: number, day: number, hour: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, hour);
  // The second pass corrects the offset when the first guess fell on the other side of a DST change.
  const first = wall - zoneOffsetMs(new Date(wall), timeZone);
  return new Date(wall - zoneOffsetMs(new Date(first), timeZone));
}
