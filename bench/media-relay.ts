import { spawn } from 'node:child_process';
import path from 'node:path';
import WebSocket from 'ws';
import { ROOT } from '../test/e2e/process-helpers.ts';

/**
 * Concurrent calls per process through the media relay: N simulated carrier streams each send a
 * 20 ms μ-law frame every 20 ms; the server relays it through a bridge connection and back; the
 * round trip is the relay latency. Reports the most concurrent calls whose p99 stays under 5 ms,
 * for our media server and for a plain `ws` relay measured the same way in the same run.
 */
async function startServer(kind: 'switchboard' | 'ws') {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'media-relay-server.ts'), kind], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      const m = /ready (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (c) => reject(new Error(`relay server exited ${c}`)));
  });
  return { url: `ws://127.0.0.1:${port}/media`, stop: () => child.kill('SIGKILL') };
}

async function measure(url: string, calls: number, seconds: number): Promise<{ p50: number; p99: number; frames: number }> {
  const rtts: number[] = [];
  const sockets: WebSocket[] = [];
  await Promise.all(
    Array.from({ length: calls }, (_, i) => new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(url);
      sockets.push(ws);
      const sent = new Map<number, bigint>();
      ws.on('open', () => {
        ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
        ws.send(JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid: `MZ${i}`, start: { streamSid: `MZ${i}`, callSid: `CA${i}`, customParameters: { call_id: `call-${i}` }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
        resolve();
      });
      ws.on('error', reject);
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.event !== 'media') return;
        const seq = Buffer.from(m.media.payload, 'base64').readUInt32BE(0);
        const at = sent.get(seq);
        if (at !== undefined) {
          rtts.push(Number(process.hrtime.bigint() - at) / 1e6);
          sent.delete(seq);
        }
      });
      (ws as WebSocket & { sent?: Map<number, bigint> }).sent = sent;
    })),
  );
  // Calls are not in step: each stream sends on its own 20 ms beat, offset across the interval.
  let seq = 0;
  const start = Date.now();
  const warmupMs = 1000;
  const timers: NodeJS.Timeout[] = [];
  sockets.forEach((ws, i) => {
    const frame = Buffer.alloc(160, 0xff);
    const beat = () => {
      seq++;
      frame.writeUInt32BE(seq, 0);
      if (Date.now() - start > warmupMs) (ws as WebSocket & { sent: Map<number, bigint> }).sent.set(seq, process.hrtime.bigint());
      ws.send(JSON.stringify({ event: 'media', streamSid: 'x', media: { track: 'inbound', chunk: String(seq), timestamp: String(seq * 20), payload: frame.toString('base64') } }));
    };
    timers.push(setTimeout(() => timers.push(setInterval(beat, 20)), (i * 20) / sockets.length));
  });
  await new Promise((r) => setTimeout(r, warmupMs + seconds * 1000));
  timers.forEach((t) => clearInterval(t));
  await new Promise((r) => setTimeout(r, 200));
  for (const ws of sockets) ws.terminate();
  rtts.sort((a, b) => a - b);
  const q = (p: number) => (rtts.length ? rtts[Math.min(rtts.length - 1, Math.floor(rtts.length * p))] : Infinity);
  return { p50: Math.round(q(0.5) * 100) / 100, p99: Math.round(q(0.99) * 100) / 100, frames: rtts.length };
}

/** The most calls (from `steps`) whose p99 stays under `limitMs`. */
async function capacity(kind: 'switchboard' | 'ws', steps: number[], seconds: number, limitMs: number) {
  const server = await startServer(kind);
  const results: { calls: number; p50: number; p99: number }[] = [];
  try {
    for (const calls of steps) {
      const r = await measure(server.url, calls, seconds);
      results.push({ calls, p50: r.p50, p99: r.p99 });
      if (r.p99 >= limitMs) break;
    }
  } finally {
    server.stop();
  }
  const ok = results.filter((r) => r.p99 < limitMs);
  return { kind, maxCalls: ok.length ? ok[ok.length - 1].calls : 0, steps: results };
}

export async function mediaRelayBench(seconds: number) {
  const steps = [25, 50, 100, 200, 300, 400, 600, 800];
  const ours = await capacity('switchboard', steps, Math.min(seconds, 5), 5);
  const baseline = await capacity('ws', steps, Math.min(seconds, 5), 5);
  return {
    name: 'media relay: concurrent calls per process with p99 relay latency < 5 ms',
    ours,
    baseline,
    summary:
      `media relay (20 ms frames both ways, p99 < 5 ms, one server process): uWebSockets.js media server + bridge ${ours.maxCalls} calls ` +
      `vs plain ws relay ${baseline.maxCalls} calls; steps ${JSON.stringify(ours.steps)} / ${JSON.stringify(baseline.steps)}`,
  };
}
