import dns from 'node:dns';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { Webhook } from 'standardwebhooks';
import { checkEndpointUrl } from '../../actors/webhooks/address-guard.ts';
import { deliverOnce } from '../../actors/webhooks/deliver.ts';
import { newSigningSecret, webhookHeaders } from '../../actors/webhooks/signing.ts';

/** A request as a local receiver saw it. */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  url: string;
  requests: Received[];
}

/**
 * A real HTTP server on 127.0.0.1 that records each request's body once read and then lets
 * `answer` respond (or not). Closed when the test ends.
 */
async function startReceiver(
  t: ExecutionContext,
  answer: (res: http.ServerResponse) => void = (res) => res.writeHead(204).end(),
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}/hooks/in`, requests };
}

/** A port that was just free: listen, note it, close. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function signedRequest(secrets = [newSigningSecret()]) {
  const body = JSON.stringify({
    id: 'evt_5f3a9c',
    object: 'event',
    type: 'call.completed',
    mode: 'test',
    created_at: '2025-03-01T12:00:00.000Z',
    data: { object: 'call', id: 'call_1', outcome: 'booked', note: 'Zürich ✓' },
  });
  const headers = webhookHeaders({
    id: 'evt_5f3a9c',
    timestampSeconds: Math.floor(Date.now() / 1000),
    body,
    secrets,
    eventType: 'call.completed',
    mode: 'test',
  });
  return { body, headers, secrets };
}

// --- deliverOnce: address guard at send time ---

test('a loopback IP literal is refused before any connection when private addresses are not allowed', async (t) => {
  const receiver = await startReceiver(t);
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: receiver.url, body, headers, allowPrivate: false });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /refused: 127\.0\.0\.1 is loopback/);
  await delay(50);
  t.is(receiver.requests.length, 0);
});

test('a name that resolves to loopback is refused by the connection-time lookup', async (t) => {
  const receiver = await startReceiver(t);
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: `http://localhost:${receiver.port}/hooks/in`, body, headers, allowPrivate: false });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /refused: localhost resolves to .* loopback/);
  await delay(50);
  t.is(receiver.requests.length, 0);
});

test('an IPv4-mapped IPv6 loopback literal is refused too', async (t) => {
  const receiver = await startReceiver(t);
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: `http://[::ffff:127.0.0.1]:${receiver.port}/`, body, headers, allowPrivate: false });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /refused/);
  await delay(50);
  t.is(receiver.requests.length, 0);
});

// --- deliverOnce: delivery ---

test('with private addresses allowed the receiver gets the exact body and headers, and they verify', async (t) => {
  const receiver = await startReceiver(t);
  const { body, headers, secrets } = signedRequest();
  const result = await deliverOnce({ url: receiver.url, body, headers, allowPrivate: true });
  t.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: 204, error: null });
  t.true(result.durationMs >= 0 && result.durationMs < 5_000);

  t.is(receiver.requests.length, 1);
  const seen = receiver.requests[0]!;
  t.is(seen.method, 'POST');
  t.is(seen.url, '/hooks/in');
  t.is(seen.body, body);
  for (const [name, value] of Object.entries(headers)) t.is(seen.headers[name], value, name);
  t.is(seen.headers['content-length'], String(Buffer.byteLength(body)));
  // A verifier written by others accepts what arrived on the wire.
  const wire = Object.fromEntries(Object.entries(seen.headers).map(([k, v]) => [k, String(v)]));
  t.deepEqual(new Webhook(secrets[0]!).verify(seen.body, wire), JSON.parse(body));
});

test('a two-secret delivery during a roll verifies at the receiver with either secret', async (t) => {
  const receiver = await startReceiver(t);
  const current = newSigningSecret();
  const previous = newSigningSecret();
  const { body, headers } = signedRequest([current, previous]);
  const result = await deliverOnce({ url: receiver.url, body, headers, allowPrivate: true });
  t.is(result.statusCode, 204);
  const seen = receiver.requests[0]!;
  const wire = Object.fromEntries(Object.entries(seen.headers).map(([k, v]) => [k, String(v)]));
  t.notThrows(() => new Webhook(current).verify(seen.body, wire));
  t.notThrows(() => new Webhook(previous).verify(seen.body, wire));
});

test('a name is delivered through the guarded lookup when private addresses are allowed', async (t) => {
  const receiver = await startReceiver(t);
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: `http://localhost:${receiver.port}/x`, body, headers, allowPrivate: true });
  t.is(result.error, null);
  t.is(result.statusCode, 204);
  t.is(receiver.requests.length, 1);
});

test('non-2xx answers are reported as their status codes', async (t) => {
  for (const status of [404, 410, 500]) {
    const receiver = await startReceiver(t, (res) => res.writeHead(status).end('nope'));
    const { body, headers } = signedRequest();
    const result = await deliverOnce({ url: receiver.url, body, headers, allowPrivate: true });
    t.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: status, error: null });
  }
});

test('a 302 is reported as 302 and its Location is not followed', async (t) => {
  const target = await startReceiver(t);
  const redirector = await startReceiver(t, (res) => res.writeHead(302, { location: target.url }).end());
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: redirector.url, body, headers, allowPrivate: true });
  t.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: 302, error: null });
  t.is(redirector.requests.length, 1);
  await delay(100);
  t.is(target.requests.length, 0);
});

// --- deliverOnce: bounds and failures ---

test('a receiver that never answers is cut at the timeout', async (t) => {
  const receiver = await startReceiver(t, () => {});
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: receiver.url, body, headers, timeoutMs: 300, allowPrivate: true });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /timeout after 300 ms/);
  t.true(result.durationMs >= 290, `took ${result.durationMs} ms`);
  t.true(result.durationMs < 1_500, `took ${result.durationMs} ms`);
  t.is(receiver.requests.length, 1);
});

test('the timeout also bounds a response body that never ends', async (t) => {
  const receiver = await startReceiver(t, (res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('still going');
  });
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: receiver.url, body, headers, timeoutMs: 300, allowPrivate: true });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /timeout/);
  t.true(result.durationMs < 1_500, `took ${result.durationMs} ms`);
});

test('an endless response body is dropped after 64 KiB without waiting for the timeout', async (t) => {
  const receiver = await startReceiver(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: receiver.url, body, headers, timeoutMs: 5_000, allowPrivate: true });
  t.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: 200, error: null });
  t.true(result.durationMs < 2_000, `took ${result.durationMs} ms`);
});

test('a closed port yields an error string, not a throw', async (t) => {
  const port = await closedPort();
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: `http://127.0.0.1:${port}/`, body, headers, allowPrivate: true });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /ECONNREFUSED/);
});

test('an unresolvable name yields an error string', async (t) => {
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: 'http://no-such-host.invalid/', body, headers, allowPrivate: false });
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /ENOTFOUND|EAI_AGAIN/);
});

test('a malformed URL yields an error string', async (t) => {
  const { body, headers } = signedRequest();
  const result = await deliverOnce({ url: 'not a url', body, headers, allowPrivate: true });
  t.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: null, error: 'invalid URL' });
});

// --- checkEndpointUrl: save-time check ---

const LIVE = { mode: 'live', allowPrivate: false } as const;
const TEST = { mode: 'test', allowPrivate: false } as const;

async function refusedWith(t: ExecutionContext, url: string, opts: typeof LIVE | typeof TEST, reason: RegExp) {
  const result = await checkEndpointUrl(url, opts);
  t.false(result.ok, url);
  if (!result.ok) t.regex(result.reason, reason, url);
}

test('live endpoints must be https; test endpoints may be http', async (t) => {
  await refusedWith(t, 'http://8.8.8.8/hook', LIVE, /https/);
  t.deepEqual(await checkEndpointUrl('https://8.8.8.8/hook', LIVE), { ok: true });
  t.deepEqual(await checkEndpointUrl('http://8.8.8.8/hook', TEST), { ok: true });
  await refusedWith(t, 'ftp://8.8.8.8/hook', TEST, /http or https/);
  await refusedWith(t, 'not a url', TEST, /not a valid URL/);
});

test('the cloud metadata address is refused', async (t) => {
  await refusedWith(t, 'http://169.254.169.254/', TEST, /169\.254\.169\.254 is link-local/);
  await refusedWith(t, 'https://169.254.169.254/latest/meta-data/', LIVE, /link-local/);
});

test('localhost and loopback in any spelling are refused', async (t) => {
  await refusedWith(t, 'https://localhost/', LIVE, /loopback/);
  await refusedWith(t, 'https://api.localhost/', LIVE, /loopback/);
  await refusedWith(t, 'http://[::ffff:127.0.0.1]/', TEST, /loopback/);
  await refusedWith(t, 'http://[::1]:8080/', TEST, /loopback/);
  await refusedWith(t, 'http://2130706433/', TEST, /127\.0\.0\.1 is loopback/);
  await refusedWith(t, 'http://0x7f.1/', TEST, /127\.0\.0\.1 is loopback/);
  await refusedWith(t, 'http://10.1.2.3/', TEST, /private/);
  await refusedWith(t, 'http://[fd00::1]/', TEST, /unique-local/);
});

test('a name that resolves to a forbidden address is refused at save time', async (t) => {
  // This machine's own name resolves through /etc/hosts, without external DNS; on a machine
  // where it resolves to a public address there is nothing to check here.
  const name = os.hostname();
  const addresses = await dns.promises.lookup(name, { all: true }).catch(() => []);
  if (addresses.length === 0 || !addresses.some((a) => /^(127\.|10\.|192\.168\.|::1$|fe80:)/.test(a.address))) {
    t.pass(`${name} does not resolve to a local address here`);
    return;
  }
  await refusedWith(t, `https://${name}/hook`, LIVE, new RegExp(`^${name.replace(/\./g, '\\.')} resolves to .* is`));
});

test('credentials in the URL are refused', async (t) => {
  await refusedWith(t, 'https://user:pass@8.8.8.8/hook', LIVE, /user name or password/);
  await refusedWith(t, 'https://user@8.8.8.8/hook', LIVE, /user name or password/);
  await refusedWith(t, 'https://:pass@8.8.8.8/hook', LIVE, /user name or password/);
});

test('allowPrivate lets local addresses through but not the scheme or credentials rules', async (t) => {
  const dev = { mode: 'test', allowPrivate: true } as const;
  t.deepEqual(await checkEndpointUrl('http://127.0.0.1:3000/hook', dev), { ok: true });
  t.deepEqual(await checkEndpointUrl('http://localhost:3000/hook', dev), { ok: true });
  t.deepEqual(await checkEndpointUrl('https://localhost/hook', { mode: 'live', allowPrivate: true }), { ok: true });
  t.false((await checkEndpointUrl('http://localhost/hook', { mode: 'live', allowPrivate: true })).ok);
  t.false((await checkEndpointUrl('http://u:p@127.0.0.1/hook', dev)).ok);
});

test('a public name is accepted, or refused for DNS only when this machine cannot resolve it', async (t) => {
  const result = await checkEndpointUrl('https://example.com/hook', LIVE);
  if (result.ok) {
    t.pass();
  } else {
    // The closed network here has no external DNS; the refusal must then be about resolution.
    t.regex(result.reason, /^dns: example\.com does not resolve/);
  }
});

test('a name that does not exist is refused with a DNS reason', async (t) => {
  await refusedWith(t, 'https://no-such-host.invalid/hook', LIVE, /^dns: no-such-host\.invalid does not resolve/);
});
