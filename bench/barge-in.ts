/**
 * Barge-in at load (issue 23 §2): N calls at once, each bridged to the fake OpenAI Realtime server
 * (test/fakes/openai-realtime.ts, in a child process) while the agent talks; the callee talks over
 * it. Measured per call: from the moment `input_audio_buffer.speech_started` reaches the call's
 * socket to the carrier `clear` (p50/p99), and the frames of the interrupted response given to the
 * carrier after the `clear` (the fake carrier counts them).
 *
 * Ours: OpenAIRealtimeBridge (turns ours, clear in the same event, nothing of the item relayed
 * after it). The reference, in the same run against the same fake: the order of work of Twilio's
 * speech-assistant-openai-realtime-api-node sample (server VAD with its defaults; on speech_started
 * it sends `conversation.item.truncate` to OpenAI first, then `clear` to Twilio, and keeps
 * forwarding every delta that still arrives). The fake's server cancel takes effect
 * `VAD_CANCEL_DELAY_MS` after speech_started (deltas generated meanwhile keep coming), and it
 * streams audio 4× faster than real time, as the real server does.
 *
 * `node --import tsx bench/barge-in.ts [calls]` runs it alone; `npm run bench barge-in` from run.ts.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createLogger } from '../runtime/logger.ts';
import { OpenAIRealtimeBridge } from '../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { AgentSetup } from '../telephony/speech-bridge.ts';
import { ratio } from './lib.ts';

const FAKE_OPTIONS = {
  greetingFrames: 300, // 6 s of agent audio …
  deltaFrames: 5, // … in deltas of 100 ms …
  frameIntervalMs: 25, // … streamed in 1.5 s
  replyFrames: 0,
  script: 'barge_in' as const,
  speechAfterAppends: 25, // the callee talks over the agent after 500 ms …
  calleeSpeechMs: 1000, // … for a second: an interruption, not a backchannel
  vadCancelDelayMs: 100,
};
const VAD_CANCEL_DELAY_MS = FAKE_OPTIONS.vadCancelDelayMs;
const SILENCE = Buffer.alloc(160, 0xff).toString('base64');
const SPEECH_STARTED = Buffer.from('"input_audio_buffer.speech_started"');

/** 20 ms μ-law frames in a payload (a delta may hold several). */
const framesIn = (payload: string) => Math.ceil(Buffer.byteLength(payload, 'base64') / 160);

/** One call's figures. */
interface CallResult {
  /** speech_started reached the call. */
  heard: boolean;
  clearLatencyMs: number | null;
  framesAfterClear: number;
}

/** The fake Realtime server in a child process (so its work does not weigh on the calls measured). */
async function startFakeProcess(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'fake'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      const m = /ready (\S+)/.exec(String(d));
      if (m) resolve(m[1]);
    });
    child.on('exit', (c) => reject(new Error(`fake realtime exited ${c}`)));
  });
  return { url, stop: () => child.kill('SIGKILL') };
}

/** A `ws` WebSocket that notes when speech_started arrives, before any other listener sees it. */
function timedSocket(onSpeechStarted: (atNs: bigint) => void): typeof WebSocket {
  return class TimedWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      this.on('message', (data: Buffer) => {
        if (data.includes(SPEECH_STARTED)) onSpeechStarted(process.hrtime.bigint());
      });
    }
  } as unknown as typeof WebSocket;
}

const setup: AgentSetup = {
  instructions: 'You call on behalf of Example Dental.',
  businessName: 'Example Dental',
  greeting: 'Hello, this is Example Dental. To stop these calls, press 9 or say stop.',
  tools: [],
  language: 'en-US',
  to: '+15550100001',
  timezone: 'America/New_York',
};

/** The callee's side of the carrier: a 20 ms frame every 20 ms, with the carrier's clock. */
function calleeStream(send: (payload: string, ms: number) => void): () => void {
  let ms = 0;
  const timer = setInterval(() => send(SILENCE, (ms += 20)), 20);
  return () => clearInterval(timer);
}

/** Our bridge: one call. */
async function oursCall(url: string, durationMs: number): Promise<CallResult> {
  let startedAt: bigint | null = null;
  let clearedAt: bigint | null = null;
  let framesAfterClear = 0;
  const bridge = new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: url, log: createLogger('silent'), WebSocketImpl: timedSocket((at) => (startedAt ??= at)) });
  const conn = await bridge.connect(setup, {
    onAudio: (payload) => {
      if (clearedAt !== null) framesAfterClear += framesIn(payload);
    },
    onInterrupted: () => {
      clearedAt ??= process.hrtime.bigint();
    },
    onToolCall: async () => ({}),
    onTranscript: () => {},
    onError: () => {},
  });
  conn.takeOver();
  const stop = calleeStream((p, ms) => conn.sendAudio(p, ms));
  await new Promise((r) => setTimeout(r, durationMs));
  stop();
  conn.close();
  return { heard: startedAt !== null, clearLatencyMs: startedAt !== null && clearedAt !== null ? Number(clearedAt - startedAt) / 1e6 : null, framesAfterClear };
}

/** The reference's order of work (Twilio's speech-assistant-openai-realtime-api-node), one call. */
async function referenceCall(url: string, durationMs: number): Promise<CallResult> {
  let startedAt: bigint | null = null;
  let clearedAt: bigint | null = null;
  let framesAfterClear = 0;
  const Socket = timedSocket((at) => (startedAt ??= at));
  const ws = new Socket(`${url}/realtime?model=gpt-realtime`, { headers: { Authorization: 'Bearer sk-test-fake' } });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let latestMediaTimestamp = 0;
  let lastAssistantItem: string | null = null;
  let responseStartTimestamp: number | null = null;
  const markQueue: string[] = [];
  const carrier = {
    media: (payload: string) => {
      if (clearedAt !== null) framesAfterClear += framesIn(payload);
    },
    clear: () => {
      clearedAt ??= process.hrtime.bigint();
    },
  };
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: setup.instructions, audio: { input: { format: { type: 'audio/pcmu' }, turn_detection: { type: 'server_vad' } }, output: { format: { type: 'audio/pcmu' }, voice: 'marin' } } } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  ws.on('message', (data: Buffer) => {
    const event = JSON.parse(data.toString());
    if (event.type === 'response.output_audio.delta' && event.delta) {
      carrier.media(event.delta);
      if (responseStartTimestamp === null) responseStartTimestamp = latestMediaTimestamp;
      if (event.item_id) lastAssistantItem = event.item_id;
      markQueue.push('responsePart');
    }
    if (event.type === 'input_audio_buffer.speech_started') {
      if (markQueue.length > 0 && responseStartTimestamp !== null) {
        const elapsed = latestMediaTimestamp - responseStartTimestamp;
        if (lastAssistantItem) ws.send(JSON.stringify({ type: 'conversation.item.truncate', item_id: lastAssistantItem, content_index: 0, audio_end_ms: elapsed }));
        carrier.clear();
        markQueue.length = 0;
        lastAssistantItem = null;
        responseStartTimestamp = null;
      }
    }
  });
  const stop = calleeStream((payload, ms) => {
    latestMediaTimestamp = ms;
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: payload }));
  });
  await new Promise((r) => setTimeout(r, durationMs));
  stop();
  ws.terminate();
  return { heard: startedAt !== null, clearLatencyMs: startedAt !== null && clearedAt !== null ? Number(clearedAt - startedAt) / 1e6 : null, framesAfterClear };
}

function summarise(results: CallResult[]) {
  const latencies = results.map((r) => r.clearLatencyMs).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] : NaN);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const frames = results.map((r) => r.framesAfterClear);
  return {
    calls: results.length,
    speechHeard: results.filter((r) => r.heard).length,
    interrupted: latencies.length,
    p50Ms: round(q(0.5)),
    p99Ms: round(q(0.99)),
    framesAfterClear: frames.reduce((a, b) => a + b, 0),
    callsWithFramesAfterClear: frames.filter((f) => f > 0).length,
  };
}

async function run(kind: 'ours' | 'reference', calls: number) {
  const fake = await startFakeProcess();
  try {
    const durationMs = 3000;
    const one = kind === 'ours' ? oursCall : referenceCall;
    // Calls are not in step: each starts within the first 20 ms, as the media beats are spread.
    const results = await Promise.all(
      Array.from({ length: calls }, (_, i) => new Promise<CallResult>((resolve, reject) => setTimeout(() => one(fake.url, durationMs).then(resolve, reject), (i * 20) / calls))),
    );
    return summarise(results);
  } finally {
    fake.stop();
  }
}

export async function bargeInBench(calls = 300) {
  const ours = await run('ours', calls);
  const reference = await run('reference', calls);
  return {
    name: 'barge-in: speech_started → carrier clear, and frames of the interrupted response after clear',
    ours,
    reference,
    summary:
      `barge-in (${calls} concurrent calls, fake Realtime in a child process, server cancel ${VAD_CANCEL_DELAY_MS} ms after speech): ` +
      `speech_started → clear p99 ${ours.p99Ms} ms vs reference ${reference.p99Ms} ms (${ratio(ours.p99Ms, reference.p99Ms)}; target < 5 ms), ` +
      `p50 ${ours.p50Ms} vs ${reference.p50Ms} ms; frames of the interrupted response after clear ${ours.framesAfterClear} ` +
      `(${ours.callsWithFramesAfterClear} calls) vs reference ${reference.framesAfterClear} (${reference.callsWithFramesAfterClear} calls) (target 0); ` +
      `interrupted ${ours.interrupted}/${calls} vs ${reference.interrupted}/${calls}`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'fake') {
    const { startFakeRealtime } = await import('../test/fakes/openai-realtime.ts');
    const fake = await startFakeRealtime(FAKE_OPTIONS);
    process.stdout.write(`ready ${fake.url}\n`);
  } else {
    const result = await bargeInBench(Number(process.argv[2] ?? 300));
    process.stdout.write(`${result.summary}\n${JSON.stringify(result)}\n`);
    process.exit(0);
  }
}

