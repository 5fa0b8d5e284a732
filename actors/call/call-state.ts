import type { EntityRegistry } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Pool } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { EntityGone } from '../../runtime/refusal.ts';
import type { Carrier } from '../../telephony/carrier.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection, SpeechBridge } from '../../telephony/speech-bridge.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import type { CallMessage, CallReplies } from './messages.ts';
import type { RetryRule } from './retries.ts';

/** What the call actor needs besides the database: the carriers, the agents, where media arrives. */
export interface CallDeps extends Deps {
  /** The one money writer: a call's end settles through it, in the call's own transaction. */
  money: MoneyWriter;
  carriers: Record<Mode, Carrier>;
  bridges: Record<Mode, SpeechBridge>;
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
}

/** The call's row. A call actor exists only for an inserted call (rows are never deleted), so none is a broken invariant: the actor stops. */
export async function mustGetCall(pool: Pool, id: string): Promise<CallRow> {
  const row = await createCallRepository(pool).get(id);
  if (!row) throw new EntityGone('call', id);
  return row;
}

/** Closes the call's live connections in this process and forgets it as running here. */
export function releaseCall(deps: Pick<CallDeps, 'liveCalls'>, state: CallState): CallState {
  if (state.limitTimer) clearTimeout(state.limitTimer);
  state.bridge?.close();
  state.media?.close();
  deps.liveCalls.delete(state.id);
  return { ...state, media: null, bridge: null, limitTimer: null };
}
