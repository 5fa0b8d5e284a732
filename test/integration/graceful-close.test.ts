import test from 'ava';
import http from 'node:http';
import Fastify from 'fastify';
import { startTestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { CLOSE_LINGER_MS, closeGracefully, installGracefulClose } from '../../http/plugins/graceful-close.ts';
import { installErrorBoundary } from '../../http/plugins/error-boundary.ts';

/*
 * The API's graceful close (a rolling upgrade stops the old worker with SIGINT once the new one is
 * ready): over real HTTP, requests in flight when the close begins are answered as usual; what
 * arrives during the close is answered as usual with `Connection: close` (or, past the grace, in
 * the error shape with Retry-After) and never with fastify's own 503; a client sees a refused
 * connection only once the listener has closed, after the linger.
 */

interface Outcome {
  at: number;
  status?: number;
  code?: string;
  retryAfter?: string | null;
  connection?: string | null;
  body?: string;
  error?: string;
}

/** A POST whose body is sent in two halves, the second `gapMs` after the first: in flight that long. */
function slowPost(url: string, path: string, key: string, body: object, gapMs: number): Promise<Outcome> {
  const text = JSON.stringify(body);
  const half = Math.floor(text.length / 2);
  return new Promise((resolve) => {
    const req = http.request(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    });
    req.on('response', (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => (data += d));
      res.on('end', () => resolve({ at: Date.now(), status: res.statusCode, body: data, connection: String(res.headers.connection ?? '') }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ at: Date.now(), error: err.code ?? err.message }));
    req.write(text.slice(0, half));
    setTimeout(() => req.end(text.slice(half)), gapMs);
  });
}

function errorCode(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; code?: string; message?: string };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? String(e.message);
}

test('a closing API finishes the requests in flight, answers what arrives meanwhile, and refuses connections only once its listener closed', async (t) => {
  const service = await startTestService({ SWITCHBOARD_ROLES: 'api' });
  let stopped = false;
  try {
    const account = await makeAccount(service.url);
    // Requests in flight across the whole close: their bodies arrive about 2 s after the close began.
    const inFlight = Array.from({ length: 5 }, (_, i) => slowPost(service.url, '/v1/customers', account.testKey, { name: `In flight ${i}`, country: 'US' }, 2_400));
    await new Promise((r) => setTimeout(r, 100));
    // And a steady load on keep-alive connections (fetch keeps them) from before the close to after it.
    const outcomes: Outcome[] = [];
    let loading = true;
    const worker = async () => {
      while (loading) {
        try {
          const res = await fetch(`${service.url}/v1/customers?limit=1`, { headers: { authorization: `Bearer ${account.testKey}` }, signal: AbortSignal.timeout(5_000) });
          const body = await res.text();
          let code: string | undefined;
          try {
            code = JSON.parse(body)?.error?.code;
          } catch {
            /* not JSON */
          }
          outcomes.push({ at: Date.now(), status: res.status, code, retryAfter: res.headers.get('retry-after'), connection: res.headers.get('connection'), body });
        } catch (err) {
          outcomes.push({ at: Date.now(), error: errorCode(err) });
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await new Promise((r) => setTimeout(r, 300));
    const closeAt = Date.now();
    const stopping = service.stop().then(() => (stopped = true));
    const answered = await Promise.all(inFlight);
    await stopping;
    const stoppedAt = Date.now();
    loading = false;
    await Promise.all(workers);

    for (const a of answered) t.is(a.status, 201, `a request in flight is answered as usual: ${JSON.stringify(a)}`);
    t.true(answered.every((a) => a.at >= closeAt + CLOSE_LINGER_MS), 'they really were in flight during the close, past the listener’s close');
    for (const a of answered) t.is(a.connection, 'close', 'and their connections are closed after the answer');

    const duringClose = outcomes.filter((o) => o.at >= closeAt && o.at <= stoppedAt);
    const beforeListenerClosed = outcomes.filter((o) => o.at >= closeAt && o.at < closeAt + CLOSE_LINGER_MS);
    t.true(beforeListenerClosed.some((o) => o.status === 200), 'requests during the linger are served');
    for (const o of outcomes) {
      t.false(o.body?.includes('"statusCode":503') ?? false, `never fastify's own 503: ${o.body}`);
      if (o.status === undefined) {
        // A connection waiting in the kernel's accept queue when the listener closes is reset instead of refused.
        t.true(o.error === 'ECONNREFUSED' || o.error === 'ECONNRESET', `the only failure a client sees is a refused connection: ${JSON.stringify(o)} at ${o.at - closeAt} ms`);
        t.true(o.at >= closeAt + CLOSE_LINGER_MS, `and only once the listener closed, after the ${CLOSE_LINGER_MS} ms linger (${o.at - closeAt} ms)`);
      } else if (o.status === 503) {
        t.is(o.code, 'service_unavailable', o.body);
        t.truthy(o.retryAfter, 'a 503 says when to retry');
      } else {
        t.is(o.status, 200, o.body);
      }
    }
    // (Read 100 ms after the close began: an answer sent just before it may be read by this same process a moment later.)
    for (const o of duringClose.filter((x) => x.status !== undefined && x.at >= closeAt + 100)) t.is(o.connection, 'close', 'an answer during the close closes its connection');
    t.log(`${outcomes.length} requests, ${duringClose.length} during the close (${stoppedAt - closeAt} ms)`);
  } finally {
    if (!stopped) await service.stop();
  }
});

test('past the grace, a request on a connection a closing server still has open gets 503 service_unavailable in the error shape with Retry-After', async (t) => {
  const app = Fastify();
  installErrorBoundary(app as never);
  installGracefulClose(app, { lingerMs: 400, graceMs: 0 });
  app.get('/slow', async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    return { slow: true };
  });
  app.get('/fast', async () => ({ fast: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const slow = fetch(`${url}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
  await new Promise((r) => setTimeout(r, 100));
  const closed = closeGracefully(app);
  // During the linger the listener still accepts: the request is refused in the error shape, not dropped.
  const res = await fetch(`${url}/fast`);
  const body = await res.json();
  t.is(res.status, 503);
  t.is(res.headers.get('retry-after'), '1');
  t.is(res.headers.get('connection'), 'close');
  t.like(body.error, { type: 'api_error', code: 'service_unavailable' });
  t.true(typeof body.error.message === 'string' && typeof body.error.request_id === 'string');
  t.deepEqual(await slow, { status: 200, body: { slow: true } }, 'the request in flight is answered as usual');
  // Its keep-alive connection is closed after that answer: the close does not wait for keepAliveTimeout.
  const t0 = Date.now();
  await closed;
  t.true(Date.now() - t0 < 2_000, `closed ${Date.now() - t0} ms after the last answer`);
});
