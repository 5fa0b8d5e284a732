import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import type { TwilioForm } from '../../telephony/twilio/callbacks.ts';

/** One callback the fake Twilio sent, as our route would see it. */
export interface ReceivedCallback {
  path: string;
  /** The URL Twilio requested (what its signature covers). */
  fullUrl: string;
  form: TwilioForm;
  signature: string | undefined;
  /** When it arrived, wall ms. */
  at: number;
}

/** Our HTTP routes' stand-in for carrier tests: keeps every callback and answers 204. */
export async function startCallbackServer(t: ExecutionContext): Promise<{ baseUrl: string; received: ReceivedCallback[] }> {
  const received: ReceivedCallback[] = [];
  let baseUrl = '';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(body)) form[k] = v;
      received.push({ path: req.url ?? '', fullUrl: baseUrl + req.url, form, signature: req.headers['x-twilio-signature'] as string | undefined, at: Date.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { baseUrl, received };
}
