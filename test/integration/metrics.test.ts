/**
 * The operator's metrics (issue 25 §1) scraped over HTTP from the service's own metrics port: a
 * test call and a few API requests move the counters and histograms, with the route pattern (never
 * the raw URL) and the expected labels; the metrics are not served on the API's port, nor the API
 * on the metrics port.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { has, parseMetrics, scrape, valueOf, type Sample } from '../helpers/metrics.ts';
import { loadConfig } from '../../runtime/config.ts';

let svc: TestService;
let account: TestAccount;
let ready: { id: string };
let metricsUrl: string;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_METRICS_PORT: '0', SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '300' });
  metricsUrl = svc.metricsUrl!;
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api, { external_ref: 'metrics-1', name: 'Bright Dental LLC' });
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

const delta = (before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

test.serial('a test call and API requests move the counters and histograms, labelled by route pattern, reason, cause and outcome', async (t) => {
  t.regex(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/, 'the metrics port binds to loopback by default');
  t.not(new URL(metricsUrl).port, String(svc.port));
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const endpoint = await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: receiver.url, mode: 'test', event_types: ['call.completed'] });
  t.is(endpoint.status, 201);

  const before = await scrape(`${metricsUrl}/metrics`);
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone: '(202) 555-0101' });
  t.is(queued.status, 201);
  const done = await dialUntilFinished(account, account.api, queued.body.id);
  t.like(done, { status: 'completed', outcome: 'appointment_booked' });
  await account.admin.post('/admin/v1/webhooks/run');
  t.is((await account.api.get(`/v1/calls/${queued.body.id}`)).status, 200);
  t.is((await account.api.get('/v1/no-such-route/abc123')).status, 404);
  // The jobs run every 300 ms here: wait for a round.
  let after = await scrape(`${metricsUrl}/metrics`);
  for (let i = 0; i < 50 && valueOf(after, 'switchboard_job_duration_seconds_count', { job: 'release_holds' }) === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await scrape(`${metricsUrl}/metrics`);
  }

  // Requests: by method, route pattern and status; the call's id is in no label.
  t.true(delta(before, after, 'switchboard_http_request_duration_seconds_count', { method: 'POST', route: '/v1/calls', status: '201' }) >= 1);
  t.true(delta(before, after, 'switchboard_http_request_duration_seconds_count', { method: 'GET', route: '/v1/calls/:id', status: '200' }) >= 2);
  t.is(delta(before, after, 'switchboard_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  t.true(has(after, 'switchboard_http_request_duration_seconds_bucket', { route: '/v1/calls/:id', le: '0.005' }));
  t.false(after.some((s) => Object.values(s.labels).some((v) => v.includes(queued.body.id) || v.includes('abc123'))), 'no raw URL in a label');

  // The call: dialled by the dialler, its media through the media server, its latencies, its ledger line.
  t.is(delta(before, after, 'switchboard_dialler_decisions_total', { decision: 'dial', reason: 'dialled', group: 'dialled' }), 1);
  t.true(delta(before, after, 'switchboard_media_frames_total', { direction: 'in' }) > 0, 'frames from the carrier');
  t.true(delta(before, after, 'switchboard_media_frames_total', { direction: 'out' }) > 0, 'frames to the carrier');
  t.is(delta(before, after, 'switchboard_call_first_frame_seconds_count'), 1);
  t.is(delta(before, after, 'switchboard_call_agent_first_audio_seconds_count'), 1);
  t.is(valueOf(after, 'switchboard_calls_in_progress'), 0, 'the call is over');
  t.is(delta(before, after, 'switchboard_ledger_lines_total', { cause: 'call', mode: 'test' }), 1);

  // The webhook of call.completed, delivered on its first attempt.
  t.is(receiver.received.length, 1);
  t.is(delta(before, after, 'switchboard_webhook_deliveries_total', { outcome: 'succeeded', attempt: '1' }), 1);

  // Actors, pools, queues and jobs, read when scraped.
  t.true(valueOf(after, 'switchboard_actors_loaded', { kind: 'call' }) >= 1);
  t.true(has(after, 'switchboard_actor_mailbox_depth', { kind: 'account' }));
  t.true(valueOf(after, 'switchboard_db_pool_connections', { pool: 'main', state: 'total' }) >= 1);
  t.true(has(after, 'switchboard_db_pool_connections', { pool: 'sender', state: 'waiting' }));
  for (const queue of ['carrier_reports', 'processor_events', 'webhook_deliveries', 'email_outbox']) {
    t.true(has(after, 'switchboard_queue_depth', { queue }), queue);
    t.true(has(after, 'switchboard_queue_oldest_age_seconds', { queue }), queue);
  }
  t.is(valueOf(after, 'switchboard_queue_depth', { queue: 'webhook_deliveries' }), 0, 'the delivery was sent');
  t.true(valueOf(after, 'switchboard_job_duration_seconds_count', { job: 'release_holds', outcome: 'ok' }) >= 1);
  t.true(has(after, 'switchboard_process_cpu_seconds_total'), 'process metrics');
});

test.serial('a request refused at a gate counts as a dialler decision by reason and group', async (t) => {
  // A number on the account's do-not-call list: the request ends do_not_call_listed at the dial.
  t.is((await account.api.post('/v1/dnc', { phone: '+12025550177' })).status, 201);
  const before = await scrape(`${metricsUrl}/metrics`);
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone: '+12025550177' });
  if (queued.status === 201) await dialUntilFinished(account, account.api, queued.body.id);
  else t.log(`queued ${queued.status}: ${JSON.stringify(queued.body)}`);
  const after = await scrape(`${metricsUrl}/metrics`);
  t.is(queued.status, 201);
  t.is(delta(before, after, 'switchboard_dialler_decisions_total', { decision: 'end', reason: 'do_not_call_listed', group: 'dnc' }), 1);
});

test.serial('GET /healthz, answered before fastify, carries the headers of every answer, is counted and writes its request line like the route, at debug', async (t) => {
  const before = await scrape(`${metricsUrl}/metrics`);
  const fast = await fetch(`${svc.url}/healthz`);
  // With a trailing slash the request goes through fastify's route (and every hook), as HEAD,
  // another host or a closing server do: the two answers must not differ but for the request id.
  const routed = await fetch(`${svc.url}/healthz/`);
  const after = await scrape(`${metricsUrl}/metrics`);
  for (const r of [fast, routed]) {
    t.is(r.status, 200);
    t.deepEqual(await r.json(), { ok: true });
    t.regex(r.headers.get('request-id') ?? '', /^req_[0-9a-f]{24}$/);
    t.is(r.headers.get('x-content-type-options'), 'nosniff');
    t.is(r.headers.get('cache-control'), 'no-store');
    t.is(r.headers.get('content-type'), 'application/json; charset=utf-8');
    t.is(r.headers.get('content-length'), '11');
  }
  const names = (r: Response) => [...r.headers.keys()].filter((n) => n !== 'date').sort();
  t.deepEqual(names(fast), names(routed));
  t.is(delta(before, after, 'switchboard_http_request_duration_seconds_count', { method: 'GET', route: '/healthz', status: '200' }), 2);
  const lineOf = (r: Response) => svc.logs.lines.find((l) => l.msg === 'request' && l.request_id === r.headers.get('request-id'));
  // A load balancer's probe answered 200 is logged at debug (docs/api.md, "Health"): at info, no line.
  for (const r of [fast, routed]) t.is(lineOf(r), undefined, 'no request line at info for a /healthz answered 200');

  const log = svc.services.log as unknown as { level: string };
  log.level = 'debug';
  let fastDebug: Response, routedDebug: Response;
  try {
    fastDebug = await fetch(`${svc.url}/healthz`);
    routedDebug = await fetch(`${svc.url}/healthz/`);
  } finally {
    log.level = 'info';
  }
  for (const r of [fastDebug, routedDebug]) {
    const line = lineOf(r);
    t.like(line, { level: 20, account_id: null, mode: null, method: 'GET', route: '/healthz', status: 200 });
    t.is(typeof line?.duration_ms, 'number');
  }
  t.deepEqual(Object.keys(lineOf(fastDebug)!).sort(), Object.keys(lineOf(routedDebug)!).sort(), 'the same fields in both lines');
});

test('the metrics are not served on the API port, nor the API on the metrics port; anything else there is 404', async (t) => {
  t.is((await fetch(`${svc.url}/metrics`)).status, 404);
  t.is((await fetch(`${svc.url}/metrics/cluster`)).status, 404);
  t.is((await fetch(`${metricsUrl}/healthz`)).status, 404);
  t.is((await fetch(`${metricsUrl}/v1/calls`)).status, 404);
  const own = await fetch(`${metricsUrl}/metrics`);
  t.is(own.status, 200);
  t.regex(own.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  // One process alone: its cluster view is itself, every worker answering.
  const cluster = parseMetrics(await (await fetch(`${metricsUrl}/metrics/cluster`)).text());
  t.is(valueOf(cluster, 'switchboard_metrics_workers', { state: 'answered' }), 1);
  t.is(valueOf(cluster, 'switchboard_metrics_workers', { state: 'missing' }), 0);
});

test('the metrics port is off by default, loopback unless told, and never the API port', (t) => {
  t.is(loadConfig({}).metrics, null);
  t.deepEqual(loadConfig({ SWITCHBOARD_METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1', instance: 0, workers: 1 });
  t.like(loadConfig({ SWITCHBOARD_METRICS_PORT: '9464', SWITCHBOARD_METRICS_HOST: '0.0.0.0', NODE_APP_INSTANCE: '2', SWITCHBOARD_METRICS_WORKERS: '4' }).metrics, { host: '0.0.0.0', instance: 2, workers: 4 });
  t.throws(() => loadConfig({ PORT: '8080', SWITCHBOARD_METRICS_PORT: '8080' }), { message: /must not take the API's port 8080/ });
  t.throws(() => loadConfig({ PORT: '8081', SWITCHBOARD_METRICS_PORT: '8080', SWITCHBOARD_METRICS_WORKERS: '2' }), { message: /must not take the API's port 8081/ });
});
