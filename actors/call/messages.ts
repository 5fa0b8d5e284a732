import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection } from '../../telephony/speech-bridge.ts';
import type { DialContext } from '../../db/admission.ts';

/** Every message the call actor takes. The live audio itself never passes through the mailbox. */
export type CallMessage =
  /** `context`: what the dial reads of the customer and the request, read for the dialler's round (db/admission.ts `loadDialContexts`). */
  | { type: 'dial'; from: string; context?: DialContext }
  /** A report of the carrier inbox (actors/call/carrier-inbox.ts) to process, once. */
  | { type: 'carrier_report_received'; reportId: string }
  | { type: 'media_connected'; session: MediaSession }
  | { type: 'bridge_connected'; connection: BridgeConnection }
  | { type: 'bridge_failed'; error: Error }
  | { type: 'tool_called'; name: string; args: Record<string, unknown> }
  | { type: 'transcript_heard'; role: 'agent' | 'callee'; text: string }
  | { type: 'media_stopped' }
  | { type: 'time_limit_reached' }
  /** The callee opted out by pressing 9 (the media stream has already stopped the agent). */
  | { type: 'opted_out'; via: 'dtmf' }
  | { type: 'get_live' };

export interface CallReplies {
  dial: { dialed: boolean };
  /** processed: this message acted on the report (false: it had been processed before). */
  carrier_report_received: { processed: boolean; finished: boolean };
  media_connected: { bridged: boolean };
  bridge_connected: { ok: true };
  bridge_failed: { ok: true };
  tool_called: unknown;
  transcript_heard: { ok: true };
  media_stopped: { ok: true };
  time_limit_reached: { ok: true };
  opted_out: { ok: true };
  get_live: { media: boolean; bridge: boolean };
}
