/**
 * The server side of the media relay benchmark, run as its own process (one core):
 * `switchboard` — our uWebSockets.js media server, each stream relayed through a speech bridge
 *   connection back to the carrier, the same path a live call's audio takes;
 * `ws` — a plain `ws` server echoing media frames, the baseline.
 * Prints `ready <port>` once listening. Each `cpu` line on stdin is answered on stdout with
 * `cpu <µs> <µs>`: the CPU (user + system, then system alone) this process has used so far, for CPU
 * per call-second and the kernel's share of it.
 */
import readline from 'node:readline';
import { WebSocketServer } from 'ws';
import path from 'node:path';
import type * as MediaServerModule from '../telephony/media-server.ts';
import { createLogger } from '../runtime/logger.ts';
import type { BridgeConnection, BridgeHandlers } from '../telephony/speech-bridge.ts';

const kind = process.argv[2];

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.stdout.write(`cpu ${user + system} ${system}\n`);
});

/** A bridge whose "agent" answers every callee frame with the same frame at once. */
function echoBridge(handlers: Pick<BridgeHandlers, 'onAudio'>): BridgeConnection {
  return {
    sendAudio: (payload) => handlers.onAudio(payload),
    takeOver: () => {},
    markPlayed: () => {},
    close: () => {},
  };
}

if (kind === 'switchboard') {
  // An optional module path in place of ours: another version of the media server, for a before/after in one run.
  const { startMediaServer } = (process.argv[3] ? await import(path.resolve(process.argv[3])) : await import('../telephony/media-server.ts')) as typeof MediaServerModule;
  const server = await startMediaServer({
    host: '127.0.0.1',
    port: 0,
    log: createLogger('error'),
    onSession: (session) => {
      const bridge = echoBridge({ onAudio: (p) => session.sendAudio(p) });
      session.onAudio((payload, ts) => bridge.sendAudio(payload, ts));
    },
  });
  process.stdout.write(`ready ${server.port}\n`);
} else {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/media' });
  wss.on('connection', (ws) => {
    let streamSid = '';
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.event === 'start') streamSid = m.streamSid;
      if (m.event === 'media') ws.send(JSON.stringify({ event: 'media', streamSid, media: { payload: m.media.payload } }));
    });
  });
  await new Promise((r) => wss.on('listening', r));
  process.stdout.write(`ready ${(wss.address() as { port: number }).port}\n`);
}
