import type { EntityRegistry } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Pool } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { EntityGone } from '../../runtime/refusal.ts';
import type { Carrier } from '../../telephony/carrier.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { AgentSetup, BridgeConnection, SpeechBridge } from '../../telephony/speech-bridge.ts';
import type { SpeechSynthesizer } from '../../telephony/speech-synthesis/synthesizer.ts';
import type { Opening, OpeningSegment } from './opening.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import type { CallMessage, CallReplies } from './messages.ts';
import type { RetryRule } from './retries.ts';
import type { CalendarOpener } from '../../calendars/open-calendar.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';

/** What the call actor needs besides the database: the carriers, the agents, where media arrives. */
export interface CallDeps extends Deps {
  /** The one money writer: a call's end settles through it, in the call's own transaction. */
  money: MoneyWriter;
  carriers: Record<Mode, Carrier>;
  bridges: Record<Mode, SpeechBridge>;
  /**
   * Speaks the call's prepared words (the opening, the voicemail message) for live-mode calls:
   * OpenAI speech when an OpenAI key is configured, else the deterministic voice. Test-mode calls
   * always use the deterministic voice (actors/call/prepared-speech.ts).
   */
  synthesizer: SpeechSynthesizer;
  /** ws(s):// URL of this process's media server (`…/media`). */
  mediaUrl: () => string;
  /** Calls this process is running now (for platform capacity). */
  liveCalls: Set<string>;
  /** The registry of call actors (tools and bridge events come back to the actor through it). */
  calls: () => EntityRegistry<CallMessage, CallReplies, CallState>;
  /** The per-call secret a media stream must bring back (the same in every process). */
  streamToken: (callId: string) => string;
  /** Told when a call's media stream stops, before anything else (the database may be away): its end is then watched for. */
  mediaStopped?: (callId: string) => void;
  /** Whether and when a request tries again after an attempt ended (actors/scheduler/retry-rules.ts; retries.ts). */
  decideRetry: RetryRule;
  /** Opens a customer's calendar from its connection's credentials (issue 24: free slots and bookings, actors/call/booking.ts). */
  calendars: CalendarOpener;
  /** Opens the connection's sealed credentials (and seals refreshed ones). */
  secrets: Pick<SecretBox, 'open' | 'seal'>;
}

/**
 * The call actor's state (actors/call/call-actor.ts): the call's live connections; every fact
 * lives in the `calls` row.
 */
export interface CallState {
  id: string;
  accountId: string;
  mode: Mode;
  customerId: string;
  media: MediaSession | null;
  bridge: BridgeConnection | null;
  limitTimer: NodeJS.Timeout | null;
  /** The call's line in this process from the dial on: its opening, its pre-opened agent (call-media.ts). */
  line: CallLine | null;
}

/** One segment of the opening with its audio. */
export interface PreparedSegment extends OpeningSegment {
  frames: string[];
  durationMs: number;
}

/**
 * What a dialled call holds live in this process (mutable: the carrier's marks and keys act on
 * it straight from the media stream, without the mailbox): the prepared opening, the agent
 * opened while the phone rings, and how far the opening has played.
 */
export interface CallLine {
  setup: AgentSetup;
  opening: Omit<Opening, 'segments'> & { segments: PreparedSegment[]; sha256: string };
  carrierCallId: string | null;
  media: MediaSession | null;
  bridge: BridgeConnection | null;
  bridgeStatus: 'connecting' | 'connected' | 'failed';
  /** Connections tried (the pre-open, and one more at the opening's end if that failed). */
  bridgeAttempts: number;
  /** Per segment: its end mark came back from the carrier (it was played to its end). */
  played: boolean[];
  openingStartedAt: Date | null;
  openingState: 'waiting' | 'playing' | 'played' | 'stopped';
  /** What was played of the opening has been written (compliance record, transcript). */
  openingRecorded: boolean;
  /** The agent should speak as soon as it is connected. */
  wantTakeOver: boolean;
  takenOver: boolean;
  /** When the agent was told to take over (performance.now()), until its first audio: switchboard_call_agent_first_audio_seconds. */
  takeOverAtMs?: number;
  optedOut: boolean;
  closed: boolean;
  /** Marks other prepared audio waits for (`playPrepared`). */
  markWaiters: Map<string, () => void>;
  /**
   * The agent's output since its pre-roll (call-media.ts: asked to speak a little before the
   * opening ends), held until the opening's last mark comes back; null when nothing is held.
   */
  held: HeldAgentOutput[] | null;
  /** Tool calls waiting for the held output to be released (true) or dropped with the call (false). */
  releaseWaiters: ((released: boolean) => void)[];
  /** Which connection of the agent may be heard: output of an older one (failed, or silenced by a machine) is dropped. */
  bridgeGeneration: number;
  /** Timers of the opening: its pacing, and the agent's pre-roll. */
  openingTimer: NodeJS.Timeout | null;
  prerollTimer: NodeJS.Timeout | null;
  /** When the opening will have played, by performance.now() (from the carrier's marks as they come back). */
  openingEndsAt: number;
  /** The carrier's latest media timestamp (ms since the stream began) and when it came (performance.now()). */
  mediaMs: number;
  mediaAt: number;
}

/** What the agent said or placed while the opening still played (`CallLine.held`). */
export type HeldAgentOutput = { audio: string } | { mark: string } | { transcript: string };

/** The call's row. A call actor exists only for an inserted call (rows are never deleted), so none is a broken invariant: the actor stops. */
export async function mustGetCall(pool: Pool, id: string): Promise<CallRow> {
  const row = await createCallRepository(pool).get(id);
  if (!row) throw new EntityGone('call', id);
  return row;
}

/** Closes the call's live connections in this process and forgets it as running here. */
export function releaseCall(deps: Pick<CallDeps, 'liveCalls'>, state: CallState): CallState {
  if (state.limitTimer) clearTimeout(state.limitTimer);
  if (state.line) closeLine(state.line);
  state.bridge?.close();
  state.media?.close();
  deps.liveCalls.delete(state.id);
  return { ...state, media: null, bridge: null, limitTimer: null, line: null };
}

/** A line not yet dialled: its opening ready, its agent not connected, nothing played. */
export function newCallLine(setup: AgentSetup, opening: CallLine['opening']): CallLine {
  return {
    setup,
    opening,
    carrierCallId: null,
    media: null,
    bridge: null,
    bridgeStatus: 'connecting',
    bridgeAttempts: 0,
    played: opening.segments.map(() => false),
    openingStartedAt: null,
    openingState: 'waiting',
    openingRecorded: false,
    wantTakeOver: false,
    takenOver: false,
    optedOut: false,
    closed: false,
    markWaiters: new Map(),
    held: null,
    releaseWaiters: [],
    bridgeGeneration: 0,
    openingTimer: null,
    prerollTimer: null,
    openingEndsAt: 0,
    mediaMs: 0,
    mediaAt: 0,
  };
}

/** The call is over here: the agent (even one still connecting, or pre-opened for a call never answered) is closed. */
export function closeLine(line: CallLine): void {
  line.closed = true;
  line.bridge?.close();
  line.bridge = null;
  dropHeld(line);
  if (line.openingTimer) clearTimeout(line.openingTimer);
  if (line.prerollTimer) clearTimeout(line.prerollTimer);
  line.openingTimer = line.prerollTimer = null;
  for (const wake of line.markWaiters.values()) wake();
  line.markWaiters.clear();
}

/**
 * The agent's held output will never be heard (a machine, an opt-out, the stream's end, a failed
 * agent): dropped, and no later output of the same connection is heard either; tool calls that
 * waited for it are told.
 */
export function dropHeld(line: CallLine): void {
  if (line.held) line.bridgeGeneration++;
  line.held = null;
  for (const wake of line.releaseWaiters.splice(0)) wake(false);
}
