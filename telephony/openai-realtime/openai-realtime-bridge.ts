/**
 * SpeechBridge adapter for OpenAI Realtime (GA protocol) over a plain `ws` WebSocket. Audio is
 * μ-law 8 kHz both ways (`audio/pcmu`), the carrier's own format, so payloads pass through
 * untouched. The SDK's realtime client is not used because it forces `wss:` (STACK-NOTES), but
 * its event types check every event we send.
 */
import WebSocket from 'ws';
import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import type { Logger } from '../../runtime/logger.ts';
import type { AgentSetup, BridgeConnection, BridgeHandlers, SpeechBridge } from '../speech-bridge.ts';

export interface OpenAIRealtimeBridgeOptions {
  apiKey: string;
  /** Default `wss://api.openai.com/v1`. */
  baseUrl?: string;
  /** Default `gpt-realtime`. */
  model?: string;
  /** Default `marin`. */
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
      voice: o.voice ?? 'marin',
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

/** Agent audio of one assistant item as the callee hears it. */
interface Playback {
  itemId: string;
  /** Carrier media timestamp at which this item's first audio reached the callee, ms. */
  startMs: number;
  relayedBytes: number;
  /** Bytes confirmed played by returned marks. */
  markedBytes: number;
}

/** One Realtime conversation, i.e. one call. */
class RealtimeSession implements BridgeConnection {
  private socket: WebSocket | null = null;
  private closedByUs = false;
  private failed = false;
  private greeted = false;
  /** Latest callee media timestamp: the carrier's clock of what has been played, ms. */
  private latestMediaMs = 0;
  private playback: Playback | null = null;
  /** Items cut by barge-in: their late deltas must not be played. */
  private readonly truncated = new Set<string>();
  private readonly marks = new Map<string, { itemId: string; endBytes: number }>();
  private markSeq = 0;
  private responseActive = false;
  private toolsRunning = 0;
  private responseWanted = false;

  constructor(
    private readonly setup: AgentSetup,
    private readonly handlers: BridgeHandlers,
    private readonly cfg: SessionConfig,
  ) {}

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
        if (!opened) reject(new Error(`OpenAI Realtime closed before opening (${code})`));
        else if (!this.closedByUs) this.fail(new Error(`OpenAI Realtime closed the session (${code} ${reason.toString()})`));
      });
    });
  }

  sendAudio(payloadBase64: string, timestampMs: number): void {
    if (timestampMs > this.latestMediaMs) this.latestMediaMs = timestampMs;
    this.send({ type: 'input_audio_buffer.append', audio: payloadBase64 });
  }

  takeOver(): void {
    /* the agent greets on session.updated (issue 23: waits for takeOver) */
  }

  markPlayed(name: string): void {
    const mark = this.marks.get(name);
    if (!mark) return;
    this.marks.delete(name);
    const p = this.playback;
    if (p && p.itemId === mark.itemId) p.markedBytes = Math.max(p.markedBytes, mark.endBytes);
  }

  close(): void {
    if (this.closedByUs) return;
    this.closedByUs = true;
    this.socket?.close(1000);
  }

  private sessionUpdate(): RealtimeClientEvent {
    const { setup, cfg } = this;
    return {
      type: 'session.update',
      session: {
        type: 'realtime',
        model: cfg.model,
        instructions: setup.instructions,
        audio: {
          input: {
            format: { type: 'audio/pcmu' },
            turn_detection: { type: 'server_vad' },
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
      case 'session.updated':
        if (!this.greeted) {
          this.greeted = true; // outbound call: the agent speaks first
          this.requestResponse();
        }
        return;
      case 'response.created':
        this.responseActive = true;
        return;
      case 'response.done':
        this.responseActive = false;
        if (this.responseWanted && this.toolsRunning === 0) this.requestResponse();
        return;
      case 'response.output_audio.delta':
        return this.relayAudio(event.item_id, event.delta);
      case 'input_audio_buffer.speech_started':
        return this.bargeIn();
      case 'response.function_call_arguments.done':
        void this.runTool(event.call_id, event.name, event.arguments);
        return;
      case 'response.output_audio_transcript.done':
        if (event.transcript) this.handlers.onTranscript('agent', event.transcript);
        return;
      case 'conversation.item.input_audio_transcription.completed':
        if (event.transcript) this.handlers.onTranscript('callee', event.transcript);
        return;
      case 'error':
        this.cfg.log.warn({ error: event.error }, 'realtime error event');
        return;
      default:
        return;
    }
  }

  private relayAudio(itemId: string, delta: string): void {
    if (typeof delta !== 'string' || this.truncated.has(itemId)) return;
    let p = this.playback;
    if (!p || p.itemId !== itemId) {
      // A new item plays after whatever of the previous one is still queued at the carrier.
      const previousEndMs = p ? p.startMs + p.relayedBytes / MULAW_BYTES_PER_MS : 0;
      p = { itemId, startMs: Math.max(this.latestMediaMs, previousEndMs), relayedBytes: 0, markedBytes: 0 };
      this.playback = p;
      this.marks.clear();
    }
    p.relayedBytes += Buffer.byteLength(delta, 'base64');
    this.handlers.onAudio(delta);
    const h = this.handlers as Partial<MarkingBridgeHandlers>;
    if (typeof h.onMark === 'function') {
      const name = `${MARK_PREFIX}${++this.markSeq}`;
      this.marks.set(name, { itemId, endBytes: p.relayedBytes });
      h.onMark(name);
    }
  }

  /** The callee spoke: if agent audio is still playing, cut the item where the callee stopped hearing it. */
  private bargeIn(): void {
    const p = this.playback;
    if (!p) return;
    const relayedMs = p.relayedBytes / MULAW_BYTES_PER_MS;
    const playedMs = Math.max(this.latestMediaMs - p.startMs, p.markedBytes / MULAW_BYTES_PER_MS, 0);
    if (playedMs >= relayedMs) return; // it had finished playing: nothing to cut
    this.playback = null;
    this.marks.clear();
    this.truncated.add(p.itemId);
    const audioEndMs = Math.floor(playedMs);
    this.cfg.log.debug({ itemId: p.itemId, audioEndMs, relayedMs }, 'barge-in');
    this.send({ type: 'conversation.item.truncate', item_id: p.itemId, content_index: 0, audio_end_ms: audioEndMs });
    this.handlers.onInterrupted();
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
    if (this.responseActive || this.toolsRunning > 0) this.responseWanted = true;
    else this.requestResponse();
  }

  private requestResponse(): void {
    this.responseWanted = false;
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
