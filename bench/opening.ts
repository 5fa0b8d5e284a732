/**
 * What the called person hears first (issue 23 §1), at N calls whose streams start together
 * (BENCH_OPENING_CALLS, default 200), against the reference's order of work measured in the same
 * run (Twilio's speech-assistant-openai-realtime-api-node sample: the Realtime socket is opened
 * when the stream starts, and the model speaks first).
 *
 * - **start → first frame**: from the carrier's `start` to the first outbound `media` frame.
 * - **opening end → agent**: the silence the callee hears before the agent: max(0, arrival of the
 *   model's first frame − the moment the carrier finishes playing what it had queued before it).
 *   A model frame that arrives while the opening still plays makes no silence. For the reference,
 *   which has no opening, the silence from `start` to the model's first frame.
 * - **opening gaps**: silence inside the opening (a frame that came after the carrier had played
 *   everything before it), the price a paced opening must not pay.
 *
 * Ours runs the call's own code (actors/call/call-media.ts: the opening prepared and the agent
 * connected while the phone rings, played at `start` and paced by its play-out, the agent asked
 * to speak AGENT_PREROLL_MS before the opening ends and its words held until the last mark) with
 * the database faked (its reads come after the opening by design), and the media server, in this
 * process. The N fake carriers and the minimal fake Realtime server below (300 ms to connect,
 * `session.created`; 200 ms from `response.create` to the first audio) run in a child process, so
 * their work does not weigh on the figures of the server's side. Targets: first frame under 20 ms
 * at p99; no silence over 200 + 20 ms.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, WebSocket } from 'ws';
import { createCallMedia } from '../actors/call/call-media.ts';
import { newCallLine, type CallDeps, type CallLine, type CallState } from '../actors/call/call-state.ts';
import { composeOpening } from '../actors/call/opening.ts';
import { agentSetup } from '../actors/call/agent-setup.ts';
import { createLogger } from '../runtime/logger.ts';
import { startMediaServer } from '../telephony/media-server.ts';
import type { MediaSession } from '../telephony/media.ts';
import { FRAME_BYTES, FRAME_MS } from '../telephony/mulaw.ts';
import type { AgentSetup, BridgeConnection, BridgeHandlers, SpeechBridge } from '../telephony/speech-bridge.ts';
import { deterministicSpeech } from '../telephony/speech-synthesis/synthesizer.ts';
import { ratio } from './lib.ts';

const CONNECT_MS = 300;
const FIRST_AUDIO_MS = 200;
/** The fake model's audio: a byte no opening frame is made of only, so the carrier tells them apart. */
const MODEL_BYTE = 0x55;
const MODEL_FRAME = Buffer.alloc(FRAME_BYTES, MODEL_BYTE).toString('base64');
const MODEL_BYTES = Buffer.from(MODEL_FRAME);
/** `e` of `{"event":"media"` at offset 11 (`a` for a mark). */
const E = 'e'.charCodeAt(0);

/** A minimal Realtime server: `session.created` CONNECT_MS after the socket opens, audio FIRST_AUDIO_MS after `response.create`. */
async function startFakeRealtime() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  wss.on('connection', (ws) => {
    setTimeout(() => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ type: 'session.created' })), CONNECT_MS);
    ws.on('message', (data) => {
      const event = JSON.parse(String(data));
      if (event.type !== 'response.create') return;
      setTimeout(() => {
        for (let i = 0; i < 10 && ws.readyState === ws.OPEN; i++) ws.send(JSON.stringify({ type: 'response.output_audio.delta', delta: MODEL_FRAME }));
      }, FIRST_AUDIO_MS);
    });
  });
  await new Promise((r) => wss.once('listening', r));
  const { port } = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => r());
      }),
  };
}

/** The smallest bridge speaking to that server: connected at `session.created`, `takeOver()` asks for a response. */
function miniBridge(url: string): SpeechBridge {
  return {
    name: 'openai-realtime',
    connect(_setup: AgentSetup, handlers: BridgeHandlers): Promise<BridgeConnection> {
      const ws = new WebSocket(url);
      return new Promise((resolve, reject) => {
        ws.on('error', reject);
        ws.on('message', (data) => {
          const event = JSON.parse(String(data));
          if (event.type === 'session.created') {
            resolve({
              takeOver: () => ws.send(JSON.stringify({ type: 'response.create' })),
              sendAudio: () => {},
              markPlayed: () => {},
              close: () => ws.close(),
            });
          } else if (event.type === 'response.output_audio.delta') handlers.onAudio(event.delta);
        });
      });
    },
  };
}

interface CallFigures {
  firstFrameMs: number;
  /** What the callee hears between what was queued before the model's first frame and that frame. */
  silenceMs: number;
  /** Silence inside the opening, ms (frames that came after the carrier had run dry). */
  openingGapMs: number;
}

/**
 * N carrier streams started together (in the child process): each sends `start`, plays what it
 * gets at real time (20 ms a frame from when it arrives, or from when the frame before it has
 * played) and echoes each mark when the audio before it has played.
 */
async function carriers(mediaUrl: string, calls: number): Promise<CallFigures[]> {
  const sockets = await Promise.all(
    Array.from({ length: calls }, () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(mediaUrl);
      ws.once('open', () => resolve(ws)).once('error', reject);
    })),
  );
  const now = () => performance.now();
  const startedAt: number[] = [];
  const results = sockets.map((ws, i) => new Promise<CallFigures>((resolve) => {
    let firstFrame = 0;
    let playedUntil = 0;
    let openingGap = 0;
    ws.on('message', (data: Buffer) => {
      // Media is most of the traffic: read without decoding (`{"event":"media"` against `{"event":"mark"`).
      if (data[11] === E) {
        const t = now();
        const started = startedAt[i]!;
        if (!firstFrame) firstFrame = t;
        if (data.includes(MODEL_BYTES)) {
          resolve({ firstFrameMs: firstFrame - started, silenceMs: Math.max(0, t - Math.max(playedUntil, started)), openingGapMs: openingGap });
          ws.terminate();
          return;
        }
        if (playedUntil && t > playedUntil) openingGap += t - playedUntil;
        playedUntil = Math.max(playedUntil, t) + FRAME_MS;
        return;
      }
      const text = String(data);
      const m = JSON.parse(text);
      if (m.event === 'mark') {
        const name = m.mark.name;
        setTimeout(() => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event: 'mark', streamSid: `MZ${i}`, mark: { name } })), Math.max(0, playedUntil - now()));
      }
    });
    ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  }));
  // The starts go out together, each timed just before it is sent.
  const starts = sockets.map((_, i) => JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid: `MZ${i}`, start: { streamSid: `MZ${i}`, callSid: `CA${i}`, customParameters: { call_id: `call-${i}`, stream_token: 'token' }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
  sockets.forEach((ws, i) => {
    startedAt[i] = now();
    ws.send(starts[i]!);
  });
  return Promise.all(results);
}

/** Ours: the call's code, each call's opening prepared and its agent connected before its stream starts. */
async function ours(calls: number, child: CarrierProcess) {
  const realtimeUrl = child.realtimeUrl;
  const log = createLogger('silent');
  const states = new Map<string, CallState>();
  let media: ReturnType<typeof createCallMedia>;
  const registry = {
    async ask(id: string, msg: { type: string; [k: string]: unknown }) {
      const state = states.get(id)!;
      if (msg.type === 'media_connected') states.set(id, await media.connectMedia(state, msg.session as MediaSession));
      else if (msg.type === 'bridge_connected') states.set(id, media.bridgeConnected(state, msg.connection as BridgeConnection));
      return { ok: true };
    },
  };
  // The database the call reads after the opening is sent: an in-progress call, writes dropped.
  const pool = {
    query: async (q: string | { text: string }) => ({ rows: /FROM calls/i.test(typeof q === 'string' ? q : q.text) ? [{ status: 'in_progress' }] : [], rowCount: 1 }),
  };
  const carrier = { startRecording: async () => {} };
  const deps = {
    pool,
    clock: { now: () => new Date() },
    log,
    config: { publicUrl: 'http://127.0.0.1' },
    streamToken: () => 'token',
    calls: () => registry,
    carriers: { test: carrier, live: carrier },
    bridges: { test: miniBridge(realtimeUrl), live: miniBridge(realtimeUrl) },
  } as unknown as CallDeps;
  media = createCallMedia(deps);
  const opening = composeOpening({ registeredName: 'Bright Dental LLC', callbackNumber: '+12025550188', to: '+12125550100', language: 'en-US' });
  const segments = opening.segments.map((s) => {
    const audio = deterministicSpeech({ text: s.text, language: 'en-US', voice: 'marin' });
    const frames: string[] = [];
    for (let o = 0; o < audio.length; o += FRAME_BYTES) frames.push(audio.subarray(o, o + FRAME_BYTES).toString('base64'));
    return { ...s, frames, durationMs: frames.length * FRAME_MS };
  });
  const setup = agentSetup({ businessName: 'Bright Smile', opening: opening.text, website: null, calledBusiness: null, language: 'en-US', timezone: 'America/New_York', to: '+12125550100' });
  for (let i = 0; i < calls; i++) {
    const line: CallLine = { ...newCallLine(setup, { ...opening, segments, sha256: '' }), carrierCallId: `CA${i}` };
    const state: CallState = { id: `call-${i}`, accountId: 'a', mode: 'test', customerId: 'c', media: null, bridge: null, limitTimer: null, line };
    states.set(state.id, state);
    media.openBridge(state, line); // while the phone rings
  }
  // The phone rings longer than the agent takes to connect.
  await new Promise((r) => setTimeout(r, CONNECT_MS + 500));
  const server = await startMediaServer({ host: '127.0.0.1', port: 0, log, onSession: (s) => void registry.ask(s.callId, { type: 'media_connected', session: s }) });
  try {
    return await child.run(`ws://127.0.0.1:${server.port}/media`, calls);
  } finally {
    await server.close();
  }
}

/** The reference's order: at `start` the Realtime socket is opened, configured, and the model speaks first. */
async function reference(calls: number, child: CarrierProcess) {
  const realtimeUrl = child.realtimeUrl;
  const log = createLogger('silent');
  const bridge = miniBridge(realtimeUrl);
  const server = await startMediaServer({
    host: '127.0.0.1',
    port: 0,
    log,
    onSession: (session) => {
      void bridge.connect({} as AgentSetup, { onAudio: (p) => session.sendAudio(p), onInterrupted: () => {}, onToolCall: async () => ({}), onTranscript: () => {}, onError: () => {} }).then((c) => {
        session.onStop(() => c.close());
        c.takeOver();
      });
    },
  });
  try {
    return await child.run(`ws://127.0.0.1:${server.port}/media`, calls);
  } finally {
    await server.close();
  }
}

function p(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]! * 10) / 10;
}

/** The child process of the fake carriers and the fake Realtime server. */
interface CarrierProcess {
  realtimeUrl: string;
  /** N carriers stream from `mediaUrl` together; their figures. */
  run(mediaUrl: string, calls: number): Promise<CallFigures[]>;
  stop(): void;
}

async function startCarrierProcess(): Promise<CarrierProcess> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['carriers'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const realtimeUrl = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { ready: string }).ready));
    child.once('exit', (code) => reject(new Error(`the carriers' process exited ${code}`)));
  });
  return {
    realtimeUrl,
    run: (mediaUrl, calls) =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { figures: CallFigures[] }).figures));
        child.send({ mediaUrl, calls });
      }),
    stop: () => child.kill('SIGKILL'),
  };
}

export async function openingBench(calls = Number(process.env.BENCH_OPENING_CALLS ?? 200)) {
  const child = await startCarrierProcess();
  try {
    const ref = await reference(calls, child);
    const our = await ours(calls, child);
    const figures = {
      calls,
      first_frame_p50_ms: p(our.map((c) => c.firstFrameMs), 0.5),
      first_frame_p99_ms: p(our.map((c) => c.firstFrameMs), 0.99),
      reference_first_frame_p99_ms: p(ref.map((c) => c.firstFrameMs), 0.99),
      opening_to_agent_p50_ms: p(our.map((c) => c.silenceMs), 0.5),
      opening_to_agent_p99_ms: p(our.map((c) => c.silenceMs), 0.99),
      opening_to_agent_max_ms: p(our.map((c) => c.silenceMs), 1),
      reference_silence_p99_ms: p(ref.map((c) => c.silenceMs), 0.99),
      opening_gap_max_ms: p(our.map((c) => c.openingGapMs), 1),
    };
    const summary =
      `opening (${calls} calls together, carriers and fake Realtime in a child process): start → first frame p99 ${figures.first_frame_p99_ms} ms, p50 ${figures.first_frame_p50_ms} ms (target < 20) vs reference ${figures.reference_first_frame_p99_ms} ms = ${ratio(figures.first_frame_p99_ms, figures.reference_first_frame_p99_ms)}; ` +
      `silence between the opening and the agent p99 ${figures.opening_to_agent_p99_ms} ms, p50 ${figures.opening_to_agent_p50_ms} ms, max ${figures.opening_to_agent_max_ms} ms (target ≤ ${FIRST_AUDIO_MS + 20}) vs reference silence before the agent ${figures.reference_silence_p99_ms} ms = ${ratio(figures.opening_to_agent_p99_ms, figures.reference_silence_p99_ms)}; ` +
      `silence inside the paced opening, worst call ${figures.opening_gap_max_ms} ms`;
    return { name: 'opening', summary, ...figures };
  } finally {
    child.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'carriers') {
    const realtime = await startFakeRealtime();
    process.on('message', (m) => {
      const { mediaUrl, calls } = m as { mediaUrl: string; calls: number };
      void carriers(mediaUrl, calls).then((figures) => process.send!({ figures }));
    });
    process.on('disconnect', () => process.exit(0));
    process.send!({ ready: realtime.url });
  } else {
    const result = await openingBench(Number(process.argv[2] ?? process.env.BENCH_OPENING_CALLS ?? 200));
    process.stdout.write(`${result.summary}\n${JSON.stringify(result)}\n`);
    process.exit(0);
  }
}
