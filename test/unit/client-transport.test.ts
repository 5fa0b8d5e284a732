/**
 * The typed client's retry rules (clients/typescript/src/transport.ts, docs/api.md "The typed
 * client"): what is retried, after how long, and what never is. The fetch is a function answering
 * what each case needs; the retries against the real service are in test/integration/client.test.ts.
 */
import test from 'ava';
import { backoffMs, retryDelayMs, retryingFetch } from '../../clients/typescript/src/transport.ts';
import { ConnectionError } from '../../clients/typescript/src/errors.ts';

/** A fetch answering `answers` in turn (an Error is thrown as a network failure); counts attempts. */
function scripted(answers: (Response | Error)[]) {
  // Each attempt gets a Response of its own (a clone's body would be tied to the original's).
  const seen: Request[] = [];
  const fetch = async (request: Request) => {
    seen.push(request);
    const next = answers[Math.min(seen.length - 1, answers.length - 1)];
    if (next instanceof Error) throw next;
    return new Response(next.body === null ? null : '{}', { status: next.status, headers: next.headers });
  };
  return { seen, fetch };
}
const answer = (status: number, headers: Record<string, string> = {}) => new Response(status === 204 ? null : '{}', { status, headers });

test('backoff doubles from 0.5 s to at most 5 s, jittered between half and all of it, never under 0.5 s', (t) => {
  t.is(backoffMs(1, () => 1), 500);
  t.is(backoffMs(2, () => 1), 1000);
  t.is(backoffMs(3, () => 0), 1000);
  t.is(backoffMs(10, () => 1), 5000);
  t.is(backoffMs(10, () => 0), 2500);
  t.is(backoffMs(1, () => 0), 500);
});

test('a 429 waits for its Retry-After up to 60 s; beyond that, or without one, it is not retried', (t) => {
  t.is(retryDelayMs(answer(429, { 'retry-after': '7' }), 1), 7000);
  t.is(retryDelayMs(answer(429, { 'retry-after': '60' }), 1), 60_000);
  t.is(retryDelayMs(answer(429, { 'retry-after': '61' }), 1), null);
  t.is(retryDelayMs(answer(429), 1), null, 'onboarding_email_limit and the like carry none');
  t.is(retryDelayMs(answer(503, { 'retry-after': '2' }), 1), 2000);
  const d = retryDelayMs(answer(503), 2)!;
  t.true(d >= 500 && d <= 1000);
  for (const status of [200, 400, 404, 409, 500]) t.is(retryDelayMs(answer(status), 1), null);
});

test('a GET is retried after a network error and a 503; a POST without Idempotency-Key is sent once', async (t) => {
  const get = scripted([new TypeError('fetch failed'), answer(503, { 'retry-after': '0' }), answer(200)]);
  const res = await retryingFetch({ maxRetries: 2, fetch: get.fetch })(new Request('http://api.test/v1/me'));
  t.is(res.status, 200);
  t.is(get.seen.length, 3);

  const post = scripted([new TypeError('fetch failed'), answer(201)]);
  const refused = await t.throwsAsync(retryingFetch({ maxRetries: 2, fetch: post.fetch })(new Request('http://api.test/v1/chat', { method: 'POST', body: '{}' })), { instanceOf: ConnectionError });
  t.is(refused!.type, 'connection_error');
  t.is(post.seen.length, 1, 'not safe to repeat: sent once');

  const unavailable = scripted([answer(503), answer(201)]);
  t.is((await retryingFetch({ maxRetries: 2, fetch: unavailable.fetch })(new Request('http://api.test/v1/chat', { method: 'POST', body: '{}' }))).status, 503);
  t.is(unavailable.seen.length, 1);
});

test('a POST with an Idempotency-Key is retried with the same key and the same body; retries stop at maxRetries', async (t) => {
  const post = scripted([new TypeError('fetch failed'), answer(503), answer(201)]);
  const request = new Request('http://api.test/v1/customers', { method: 'POST', headers: { 'idempotency-key': 'k-1' }, body: '{"name":"A"}' });
  t.is((await retryingFetch({ maxRetries: 2, fetch: post.fetch })(request)).status, 201);
  t.deepEqual(post.seen.map((r) => r.headers.get('idempotency-key')), ['k-1', 'k-1', 'k-1']);
  t.deepEqual(await Promise.all(post.seen.map((r) => r.text())), ['{"name":"A"}', '{"name":"A"}', '{"name":"A"}']);

  const down = scripted([answer(503)]);
  t.is((await retryingFetch({ maxRetries: 1, fetch: down.fetch })(new Request('http://api.test/v1/me'))).status, 503);
  t.is(down.seen.length, 2, 'one retry, then the 503 is answered');
});
