/**
 * SpeechBridge adapter for OpenAI Realtime (GA protocol) over a plain `ws` WebSocket. Audio is
 * μ-law 8 kHz both ways (`audio/pcmu`), the carrier's own format, so payloads pass through
 * untouched. The SDK's realtime client is not used because it forces `wss:` (STACK-NOTES), but
 * its event types check every event we send.
 *
 * The session is opened while the phone rings: `session.update`, then the prepared opening as an
 * assistant item (the callee hears it as audio the call plays; the model continues from it). The
 * model says nothing before `takeOver()`, which the call makes a little before the opening ends
 * (holding the words until it has: `startsAtMediaMs` says when they start playing, and the
 * playback clock counts from there). Turn-taking is ours: server VAD reports speech but
 * neither creates nor cancels responses (`create_response`/`interrupt_response` off), so the
 * bridge alone decides when the agent speaks and never collides with a server-made response.
 *
 * Barge-in: on `speech_started` while agent audio is unplayed, the caller is told at once
 * (`onInterrupted`: the carrier drops its queue) and nothing more of that audio is relayed. Speech
 * that stops within `turn.backchannel_max_ms` ("mm-hm") was a backchannel: the item's audio is
 * played again from where the callee stopped hearing it. Longer speech cuts it: the response is
 * cancelled, the item truncated at the played position, its transcript kept to the words played.
 */
import WebSocket from 'ws';
import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import type { Logger } from '../../runtime/logger.ts';
import type { AgentSetup, BridgeConnection, BridgeHandlers, SpeechBridge, TakeOverOptions, TurnSettings } from '../speech-bridge.ts';
import { observeBargeIn, secondsSince } from '../../runtime/metrics.ts';

export interface OpenAIRealtimeBridgeOptions {
  apiKey: string;
  /** Default `wss://api.openai.com/v1`. */
  baseUrl?: string;
  /** Default `gpt-realtime`. */
  model?: string;
  /** Used when the setup names no voice. Default `marin`. */
  voice?: string;
  log: Logger;
  /** For tests; default the `ws` package. */
  WebSocketImpl?: typeof WebSocket;
  /** How long connect() waits for the socket to open, ms. Default 10,000. */
  connectTimeoutMs?: number;
}

/**
 * Handlers that can also place carrier marks. BridgeHandlers has no way to ask for a mark, so a
 * caller that wants played audio tracked by marks passes this, sends `name` as a carrier mark
 * right after the audio it was given, and reports the echo through `markPlayed(name)`. Without it
 * the bridge estimates playback from the carrier's media clock alone.
 */
export interface MarkingBridgeHandlers extends BridgeHandlers {
  onMark(name: string): void;
}

/**
 * Turn-taking when the setup gives none: the defaults of a customer's `call_settings.turn_detection`
 * (actors/customer/call-settings.ts DEFAULT_CALL_SETTINGS; telephony does not import actors, and
 * test/unit/realtime-turn-defaults.test.ts checks the two agree).
 */
export const DEFAULT_TURN: Readonly<TurnSettings> = Object.freeze({ silence_ms: 500, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 700 });

/** μ-law: one byte per sample at 8 kHz, so 8 bytes per ms. */
const MULAW_BYTES_PER_MS = 8;
const MARK_PREFIX = 'oai:';

export class OpenAIRealtimeBridge implements SpeechBridge {
  readonly name = 'openai-realtime' as const;

  constructor(private readonly opts: OpenAIRealtimeBridgeOptions) {}

  connect(setup: AgentSetup, handlers: BridgeHandlers): Promise<BridgeConnection> {
    const o = this.opts;
    const model = o.model ?? 'gpt-realtime';
    const session = new RealtimeSession(setup, handlers, {
      url: `${(o.baseUrl ?? 'wss://api.openai.com/v1').replace(/\/$/, '')}/realtime?model=${encodeURIComponent(model)}`,
      apiKey: o.apiKey,
      model,
      voice: setup.voice ?? o.voice ?? 'marin',
      log: o.log.child({ component: 'openai-realtime', model }),
      WebSocketImpl: o.WebSocketImpl ?? WebSocket,
      connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
    });
    return session.open();
  }
}


interface SessionConfig {
  url: string;
  apiKey: string;
  model: string;
  voice: string;
  log: Logger;
  WebSocketImpl: typeof WebSocket;
  connectTimeoutMs: number;
}

/** Agent audio of one assistant item as relayed to the callee. */
interface Playback {
  itemId: string;
  /** The response the item belongs to (it may still be streaming). */
  responseId: string;
  /** Carrier media timestamp at which this item's first relayed audio reached the callee, ms. */
  startMs: number;
  /** Bytes given to the carrier (from the item's start: a resumed item counts what played before). */
  relayedBytes: number;
  /** Bytes confirmed played by returned marks. */
  markedBytes: number;
}

/** Everything the server sent of one assistant item's audio (to play again after a backchannel). */
interface ItemAudio {
  responseId: string;
  chunks: Buffer[];
  bytes: number;
}

/** The callee started speaking over the agent: its audio is held until we know whether it was a backchannel. */
interface Pause {
  /** The item that was playing, and how much of it the callee heard; null: a response had started but no audio played. */
  itemId: string | null;
  playedBytes: number;
  /** Items whose audio arrived during the pause (not relayed), in order. */
  held: string[];
  timer: NodeJS.Timeout | null;
}

/** A transcript line of an item cut by barge-in: played ms over the item's audio ms keeps the words said. */
interface Cut {
  playedMs: number;
  /** Audio the server sent for the item, ms (counted on after the cut: the transcript covers it all). */
  receivedBytes: number;
}

/** One Realtime conversation, i.e. one call. */
class RealtimeSession implements BridgeConnection {
  private socket: WebSocket | null = null;
  private closedByUs = false;
  private failed = false;
  private takenOver = false;
  /** Carrier media time before which nothing the agent says plays: the caller holds it until the opening has played (`takeOver`). */
  private startsAtMediaMs = 0;
  private readonly turn: TurnSettings;
  /** Latest callee media timestamp: the carrier's clock of what has been played, ms. */
  private latestMediaMs = 0;
  private playback: Playback | null = null;
  private readonly audio = new Map<string, ItemAudio>();
  private pause: Pause | null = null;
  /** Items cut by barge-in: their late deltas are not played. */
  private readonly cuts = new Map<string, Cut>();
  /** Agent transcript lines waiting until their item has played (or was cut). */
  private readonly pendingTranscripts = new Map<string, string>();
  private readonly marks = new Map<string, { itemId: string; endBytes: number }>();
  private markSeq = 0;
  private responseActive = false;
  /** A response.create was sent and its response.created has not come back yet. */
  private responseRequested = false;
  private responseId: string | null = null;
  /** Responses we cancelled: whatever audio of theirs still comes is not played. */
  private readonly cancelled = new Set<string>();
  /** Barge-in cut a response that was asked for and not yet created: cancel it when it is. */
  private cancelOnCreate = false;
  /** The active response called a function (it is not speech to interrupt). */
  private responseCallsTool = false;
  private toolsRunning = 0;
  private responseWanted = false;
  /** Between speech_started and the commit of the callee's turn. */
  private calleeSpeaking = false;
  /** When the event being handled arrived (performance.now()): barge-in's latency starts there. */
  private eventAtMs = 0;

  constructor(
    private readonly setup: AgentSetup,
    private readonly handlers: BridgeHandlers,
    private readonly cfg: SessionConfig,
  ) {
    this.turn = setup.turn ?? DEFAULT_TURN;
  }

  open(): Promise<BridgeConnection> {
    const { cfg } = this;
    return new Promise((resolve, reject) => {
      const socket = new cfg.WebSocketImpl(cfg.url, { headers: { Authorization: `Bearer ${cfg.apiKey}` } });
      this.socket = socket;
      let opened = false;
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`OpenAI Realtime did not open within ${cfg.connectTimeoutMs} ms`));
      }, cfg.connectTimeoutMs);
      socket.on('open', () => {
        opened = true;
        clearTimeout(timer);
        cfg.log.debug('realtime socket open');
        this.send(this.sessionUpdate());
        // The opening the callee hears (prepared audio the call plays) is the agent's first turn.
        if (this.setup.greeting.trim()) {
          this.send({
            type: 'conversation.item.create',
            item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: this.setup.greeting }] },
          });
        }
        resolve(this);
      });
      socket.on('message', (data) => this.receive(data.toString()));
      socket.on('error', (err) => {
        clearTimeout(timer);
        if (!opened) reject(new Error(`OpenAI Realtime connect failed: ${err.message}`));
        else this.fail(err);
      });
      socket.on('close', (code, reason) => {
        clearTimeout(timer);
        if (this.pause?.timer) clearTimeout(this.pause.timer);
        if (!opened) reject(new Error(`OpenAI Realtime closed before opening (${code})`));
        else if (!this.closedByUs) this.fail(new Error(`OpenAI Realtime closed the session (${code} ${reason.toString()})`));
      });
    });
  }

  takeOver(options?: TakeOverOptions): void {
    if (this.takenOver || this.closedByUs) return;
    this.takenOver = true;
    this.startsAtMediaMs = Math.max(0, options?.startsAtMediaMs ?? 0);
    // The callee is talking: the agent answers once their turn is committed.
    if (this.calleeSpeaking) return;
    this.answer();
  }

  sendAudio(payloadBase64: string, timestampMs: number): void {
    if (timestampMs > this.latestMediaMs) this.latestMediaMs = timestampMs;
    this.send({ type: 'input_audio_buffer.append', audio: payloadBase64 });
    if (this.pendingTranscripts.size) this.reportPlayedTranscripts();
  }

  markPlayed(name: string): void {
    const mark = this.marks.get(name);
    if (!mark) return;
    this.marks.delete(name);
    const p = this.playback;
    if (p && p.itemId === mark.itemId) p.markedBytes = Math.max(p.markedBytes, mark.endBytes);
    if (this.pendingTranscripts.size) this.reportPlayedTranscripts();
  }

  close(): void {
    if (this.closedByUs) return;
    // What was said and not yet reported: the words the callee heard.
    for (const [itemId, text] of this.pendingTranscripts) {
      const p = this.playback;
      const heard = p && p.itemId === itemId ? wordsUpTo(text, this.playedMs(p) / Math.max(1, this.receivedMs(itemId))) : text;
      if (heard) this.handlers.onTranscript('agent', heard);
    }
    this.pendingTranscripts.clear();
    this.closedByUs = true;
    if (this.pause?.timer) clearTimeout(this.pause.timer);
    this.socket?.close(1000);
  }

  private sessionUpdate(): RealtimeClientEvent {
    const { setup, cfg, turn } = this;
    return {
      type: 'session.update',
      session: {
        type: 'realtime',
        model: cfg.model,
        instructions: setup.instructions,
        audio: {
          input: {
            format: { type: 'audio/pcmu' },
            turn_detection: {
              type: 'server_vad',
              threshold: turn.threshold,
              prefix_padding_ms: turn.prefix_padding_ms,
              silence_duration_ms: turn.silence_ms,
              // The bridge takes the turns: the server reports speech and never answers or cancels by itself.
              create_response: false,
              interrupt_response: false,
            },
            transcription: { model: 'gpt-4o-mini-transcribe', language: setup.language.split('-')[0] },
          },
          output: { format: { type: 'audio/pcmu' }, voice: cfg.voice },
        },
        tools: setup.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters })),
        tool_choice: 'auto',
      },
    };
  }

  private receive(text: string): void {
    if (this.closedByUs) return;
    this.eventAtMs = performance.now();
    let event: RealtimeServerEvent;
    try {
      event = JSON.parse(text);
      if (typeof event?.type !== 'string') throw new Error('no type');
    } catch {
      this.cfg.log.warn({ sample: text.slice(0, 120) }, 'ignored malformed realtime event');
      return;
    }
    try {
      this.dispatch(event);
    } catch (err) {
      // A throwing handler is the caller's bug; it must not kill the socket's event loop.
      this.cfg.log.error({ err, event: event.type }, 'realtime event handling failed');
    }
  }

  private dispatch(event: RealtimeServerEvent): void {
    // The server sends some forty event types; those not listed here are progress reports we
    // do not need (the .done events carry the complete values).
    switch (event.type) {
      case 'response.created':
        this.responseActive = true;
        this.responseRequested = false;
        this.responseId = event.response?.id ?? null;
        if (this.cancelOnCreate) {
          this.cancelOnCreate = false;
          this.cancelResponse();
        }
        this.responseCallsTool = false;
        return;
      case 'response.done':
        this.responseActive = false;
        this.responseCallsTool = false;
        if (event.response?.status === 'cancelled') this.cfg.log.debug({ response: event.response.id }, 'response cancelled');
        if (this.responseWanted && this.toolsRunning === 0 && !this.calleeSpeaking && !this.responseRequested) this.requestResponse();
        return;
      case 'response.output_audio.delta':
        if (this.cancelled.has(event.response_id)) return;
        return this.audioDelta(event.response_id, event.item_id, event.delta);
      case 'input_audio_buffer.speech_started':
        return this.speechStarted();
      case 'input_audio_buffer.speech_stopped':
        return this.speechStopped();
      case 'input_audio_buffer.committed':
        return this.turnCommitted();
      case 'response.function_call_arguments.done':
        this.responseCallsTool = true;
        void this.runTool(event.call_id, event.name, event.arguments);
        return;
      case 'response.output_audio_transcript.done':
        return this.agentTranscript(event.item_id, event.transcript);
      case 'conversation.item.input_audio_transcription.completed':
        if (event.transcript) this.handlers.onTranscript('callee', event.transcript);
        return;
      case 'error':
        this.cfg.log.warn({ error: event.error }, 'realtime error event');
        if (event.error?.code === 'conversation_already_has_active_response' && this.responseRequested) {
          // Not expected (the server makes no responses of its own here): ask again when it is done.
          this.responseRequested = false;
          this.responseWanted = true;
        }
        return;
      default:
        return;
    }
  }

  private audioDelta(responseId: string, itemId: string, delta: string): void {
    if (typeof delta !== 'string') return;
    const bytes = Buffer.from(delta, 'base64');
    const cut = this.cuts.get(itemId);
    if (cut) {
      cut.receivedBytes += bytes.length; // a late delta of a cut item: counted, never played
      return;
    }
    let stored = this.audio.get(itemId);
    if (!stored) {
      stored = { responseId, chunks: [], bytes: 0 };
      this.audio.set(itemId, stored);
    }
    stored.chunks.push(bytes);
    stored.bytes += bytes.length;
    const pause = this.pause;
    if (pause) {
      // The callee is talking: hold it until we know whether it was a backchannel.
      if (pause.itemId === null) pause.itemId = itemId;
      else if (pause.itemId !== itemId && !pause.held.includes(itemId)) pause.held.push(itemId);
      return;
    }
    this.relay(itemId, bytes);
  }

  /** Gives `bytes` of `itemId` to the carrier, with a mark after them. */
  private relay(itemId: string, bytes: Buffer): void {
    let p = this.playback;
    if (!p || p.itemId !== itemId) {
      // A new item plays after whatever of the previous one is still queued at the carrier, and
      // not before the opening has played (the caller holds it until then); the previous one
      // counts as heard.
      const previousEndMs = p ? p.startMs + p.relayedBytes / MULAW_BYTES_PER_MS : 0;
      if (p) this.reportTranscript(p.itemId);
      if (p) this.audio.delete(p.itemId);
      const responseId = this.audio.get(itemId)?.responseId ?? '';
      p = { itemId, responseId, startMs: Math.max(this.latestMediaMs, previousEndMs, this.startsAtMediaMs), relayedBytes: 0, markedBytes: 0 };
      this.playback = p;
      this.marks.clear();
    }
    p.relayedBytes += bytes.length;
    this.handlers.onAudio(bytes.toString('base64'));
    const h = this.handlers as Partial<MarkingBridgeHandlers>;
    if (typeof h.onMark === 'function') {
      const name = `${MARK_PREFIX}${++this.markSeq}`;
      this.marks.set(name, { itemId, endBytes: p.relayedBytes });
      h.onMark(name);
    }
  }

  /** How much of `p` the callee has heard, ms: the carrier's clock since it started, or the returned marks, whichever is further; at most what was relayed. */
  private playedMs(p: Playback): number {
    const relayedMs = p.relayedBytes / MULAW_BYTES_PER_MS;
    return Math.min(relayedMs, Math.max(this.latestMediaMs - p.startMs, p.markedBytes / MULAW_BYTES_PER_MS, 0));
  }

  private receivedMs(itemId: string): number {
    const cut = this.cuts.get(itemId);
    return (cut ? cut.receivedBytes : (this.audio.get(itemId)?.bytes ?? 0)) / MULAW_BYTES_PER_MS;
  }

  /** Agent audio is queued at the carrier and not yet heard, or a response is on its way. */
  private agentSpeaking(): boolean {
    const p = this.playback;
    if (p && this.playedMs(p) < p.relayedBytes / MULAW_BYTES_PER_MS) return true;
    // A response we cancelled is not speech any more, even before its response.done comes.
    const cancelled = this.responseId !== null && this.cancelled.has(this.responseId);
    return (this.responseActive && !this.responseCallsTool && !cancelled) || (this.responseRequested && !this.cancelOnCreate);
  }

  /** The callee started talking: over the agent, it stops at once (the caller clears the carrier's queue). */
  private speechStarted(): void {
    this.calleeSpeaking = true;
    if (!this.takenOver || this.pause || !this.agentSpeaking()) return;
    const p = this.playback;
    // The playing item: audio of it is unplayed, or its response is still streaming more of it
    // (the carrier may have caught up with the stream for a moment).
    const current = p !== null && (this.playedMs(p) < p.relayedBytes / MULAW_BYTES_PER_MS || (this.responseActive && p.responseId === this.responseId));
    const pause: Pause = {
      itemId: current ? p!.itemId : null,
      playedBytes: current ? Math.floor(this.playedMs(p!)) * MULAW_BYTES_PER_MS : 0,
      held: [],
      timer: null,
    };
    this.pause = pause;
    // The carrier returns its pending marks when cleared: they say nothing of what was played.
    this.marks.clear();
    this.handlers.onInterrupted();
    observeBargeIn(secondsSince(this.eventAtMs));
    this.cfg.log.debug({ itemId: pause.itemId, playedMs: pause.playedBytes / MULAW_BYTES_PER_MS }, 'callee speaks over the agent');
    const backchannelMs = this.turn.backchannel_max_ms;
    if (backchannelMs <= 0) return this.interrupt();
    // speech_stopped comes after the speech and the turn's silence: a backchannel's arrives within both.
    pause.timer = setTimeout(() => this.pause === pause && this.interrupt(), backchannelMs + this.turn.silence_ms);
  }

  /** Short speech over the agent was a backchannel: it carries on from where the callee stopped hearing it. */
  private speechStopped(): void {
    const pause = this.pause;
    if (!pause) return;
    if (pause.timer) clearTimeout(pause.timer);
    this.pause = null;
    this.cfg.log.debug({ itemId: pause.itemId }, 'backchannel: the agent carries on');
    for (const itemId of pause.itemId ? [pause.itemId, ...pause.held] : []) {
      const stored = this.audio.get(itemId);
      if (!stored) continue;
      let all = Buffer.concat(stored.chunks);
      stored.chunks = [all];
      if (itemId === pause.itemId && this.playback?.itemId === itemId) {
        // Carry on from the played position: the carrier dropped the rest (and nothing plays before the opening's end).
        const p = this.playback;
        const playedMs = pause.playedBytes / MULAW_BYTES_PER_MS;
        p.startMs = Math.max(this.latestMediaMs - playedMs, this.startsAtMediaMs);
        p.relayedBytes = pause.playedBytes;
        p.markedBytes = pause.playedBytes;
        all = all.subarray(pause.playedBytes);
      }
      for (let at = 0; at < all.length; at += RESEND_CHUNK_BYTES) this.relay(itemId, all.subarray(at, at + RESEND_CHUNK_BYTES));
    }
  }

  /**
   * The callee really talks over the agent: the response is cancelled, the item cut where the
   * callee stopped hearing it (and later items that arrived meanwhile, unheard, at 0), and the
   * agent answers once the callee's turn is committed.
   */
  private interrupt(): void {
    const pause = this.pause;
    if (!pause) return;
    if (pause.timer) clearTimeout(pause.timer);
    this.pause = null;
    if (this.responseActive && !this.responseCallsTool) this.cancelResponse();
    else if (this.responseRequested) this.cancelOnCreate = true;
    for (const itemId of pause.itemId ? [pause.itemId, ...pause.held] : []) {
      const receivedBytes = this.audio.get(itemId)?.bytes ?? 0;
      // Clamped to the audio the server sent: a truncate past it is refused.
      const playedBytes = itemId === pause.itemId ? Math.min(pause.playedBytes, receivedBytes) : 0;
      const audioEndMs = Math.floor(playedBytes / MULAW_BYTES_PER_MS);
      this.cuts.set(itemId, { playedMs: audioEndMs, receivedBytes });
      this.audio.delete(itemId);
      this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: audioEndMs });
      this.cfg.log.debug({ itemId, audioEndMs }, 'barge-in: item cut');
      const text = this.pendingTranscripts.get(itemId);
      if (text !== undefined) {
        this.pendingTranscripts.delete(itemId);
        this.reportTranscript(itemId, text);
      }
    }
    if (this.playback && this.cuts.has(this.playback.itemId)) this.playback = null;
  }

  /** The callee's turn is in the conversation: the agent answers unless it is still speaking. */
  private turnCommitted(): void {
    this.calleeSpeaking = false;
    if (!this.takenOver || this.pause || this.agentSpeaking()) return;
    this.answer();
  }

  /** Asks for the agent's next response now, or once the running one is done. */
  private answer(): void {
    if (this.responseActive || this.responseRequested || this.toolsRunning > 0) this.responseWanted = true;
    else this.requestResponse();
  }

  private agentTranscript(itemId: string, transcript: string): void {
    if (!transcript) return;
    if (this.cuts.has(itemId)) return this.reportTranscript(itemId, transcript);
    this.pendingTranscripts.set(itemId, transcript);
    this.reportPlayedTranscripts();
  }

  /** Reports pending transcript lines of items the callee has heard to the end. */
  private reportPlayedTranscripts(): void {
    const p = this.playback;
    for (const itemId of [...this.pendingTranscripts.keys()]) {
      if (this.pause && (this.pause.itemId === itemId || this.pause.held.includes(itemId))) continue;
      if (p?.itemId === itemId && this.playedMs(p) < this.receivedMs(itemId)) continue;
      this.reportTranscript(itemId);
    }
  }

  /**
   * Reports the agent's line for `itemId`: whole, or for a cut item only the words played (the
   * share of its audio the callee heard; a word cut in the middle is not kept).
   */
  private reportTranscript(itemId: string, text = this.pendingTranscripts.get(itemId)): void {
    this.pendingTranscripts.delete(itemId);
    if (!text) return;
    const cut = this.cuts.get(itemId);
    const said = cut ? wordsUpTo(text, cut.playedMs / Math.max(1, cut.receivedBytes / MULAW_BYTES_PER_MS)) : text;
    if (said) this.handlers.onTranscript('agent', said);
  }

  private async runTool(callId: string, name: string, argsJson: string): Promise<void> {
    this.toolsRunning++;
    let result: unknown;
    try {
      const args = JSON.parse(argsJson || '{}');
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new Error('arguments are not an object');
      result = await this.handlers.onToolCall(name, args as Record<string, unknown>);
    } catch (err) {
      // The model gets the failure as the function output and can recover in conversation.
      this.cfg.log.warn({ err, tool: name }, 'tool call failed');
      result = { error: err instanceof Error ? err.message : String(err) };
    } finally {
      this.toolsRunning--;
    }
    this.send({
      type: 'conversation.item.create',
      item: { type: 'function_call_output', call_id: callId, output: JSON.stringify(result ?? null) },
    });
    // A response.create while the calling response is still streaming is refused by the server.
    if (this.responseActive || this.responseRequested || this.toolsRunning > 0 || this.calleeSpeaking) this.responseWanted = true;
    else this.requestResponse();
  }

  private cancelResponse(): void {
    if (this.responseId) this.cancelled.add(this.responseId);
    this.send({ type: 'response.cancel' });
  }

  private requestResponse(): void {
    this.responseWanted = false;
    this.responseRequested = true;
    this.send({ type: 'response.create' });
  }

  private send(event: RealtimeClientEvent): void {
    const socket = this.socket;
    if (this.closedByUs || !socket || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(event));
  }

  private fail(err: Error): void {
    if (this.failed || this.closedByUs) return;
    this.failed = true;
    this.cfg.log.warn({ err }, 'realtime session failed');
    this.handlers.onError(err);
  }
}

/** Audio played again after a backchannel goes out in 100 ms pieces, each with its mark. */
const RESEND_CHUNK_BYTES = 100 * MULAW_BYTES_PER_MS;

/** The first `fraction` of `text`'s words, rounded down (a word cut in the middle was not said). */
export function wordsUpTo(text: string, fraction: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, Math.floor(words.length * Math.max(0, Math.min(1, fraction)) + 1e-9)).join(' ');
}
