import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP webhook receiver on loopback. `respond` decides each answer (status, delay, body: 'ok' unless given);
 * everything received is kept in order.
 */
export async function startReceiver(respond: (n: number, r: Received) => { status: number; delayMs?: number; body?: string } = () => ({ status: 200 })) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const r = { headers: req.headers, body, at: Date.now() };
      received.push(r);
      const answer = respond(received.length, r);
      const send = () => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
