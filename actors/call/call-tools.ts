import { readToolCall } from './tool-args.ts';
import { createBooking } from './booking.ts';
import { mustGetCall, type CallDeps, type CallState } from './call-state.ts';
import type { CallEnd } from './call-end.ts';
import { objectToRecording } from './recording-objection.ts';
import { RECORDING_OBJECTION_TOOL } from './agent-setup.ts';

/** The agent's tools during a call: find free slots, book an appointment, record a do-not-call request, end the call. */
export function createCallTools(deps: CallDeps, end: CallEnd, optOut: (state: CallState, reason: string | null) => Promise<void>) {
  const { pool, clock, log } = deps;
  const booking = createBooking({ pool, log, calendars: deps.calendars, secrets: deps.secrets });

  /** Carries out the agent's call of a tool; its arguments are read (and made safe to write) by tool-args.ts. */
  async function tool(state: CallState, name: string, args: Record<string, unknown>): Promise<unknown> {
    // The callee objects to the recording: stop it at the carrier (recording-objection.ts).
    if (name === RECORDING_OBJECTION_TOOL.name) return objectToRecording(deps, end, state);
    const call = await mustGetCall(pool, state.id);
    const now = clock.now();
    const read = readToolCall(name, args, now);
    if ('reply' in read) return read.reply;
    const wanted = read.act;
    switch (wanted.tool) {
      case 'find_free_slots':
        return booking.findSlots(call, now, { after: wanted.after, partOfDay: wanted.partOfDay });
      case 'book_appointment': {
        if (call.appointment_id) return { booked: true, appointment_id: call.appointment_id, note: 'already booked on this call' };
        // The meeting's length is the customer's (booking settings); the agent's duration_minutes is not used.
        return booking.book(call, now, { startAt: wanted.startAt, attendeeName: wanted.attendeeName, notes: wanted.notes });
      }
      case 'mark_do_not_call': {
        // Recorded at once, and the call ends without further conversation (call-actor.ts optOut).
        await optOut(state, wanted.reason);
        return { recorded: true };
      }
      case 'end_call': {
        // Hang up after this message: the agent's goodbye has already been sent to the carrier.
        setTimeout(() => void end.hangUp(state, wanted.reason).catch((err) => log.warn({ err }, 'hangup failed')), 50).unref();
        return { ending: true };
      }
      default: {
        const unhandled: never = wanted;
        throw new Error(`unhandled tool ${(unhandled as { tool: string }).tool}`);
      }
    }
  }

  return { tool };
}
