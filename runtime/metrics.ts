import client from 'prom-client';

/**
 * The operator's metrics (issue 25 §1): every metric the service exports, defined here, in one
 * registry of this process, served by runtime/metrics-server.ts on a port of its own. Rooms count
 * through the small functions below and never touch prom-client themselves.
 *
 * Hot paths stay cheap: media frames are plain integers added to the counter only when scraped,
 * and what is a state (mailboxes, streams, pools, queues) is read when scraped, never pushed.
 *
 * `aggregator` says how one process's value joins the others' in the cluster view
 * (runtime/metrics-server.ts): counts of this process's things are summed; facts every process
 * reads from the one database (queue depth and age) take the largest.
 */
export const metricsRegistry = new client.Registry();

const PREFIX = 'switchboard_';
/** Request, job and turn latencies, seconds: 5 ms to 30 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Turn latencies of a call are ears-and-mouth times: finer under a second. */
const TURN_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];

let defaultsOn = false;
/** Process metrics (CPU, memory, event-loop lag, handles), once per process, when the metrics port is on. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  client.collectDefaultMetrics({ register: metricsRegistry, prefix: PREFIX });
}

// --- HTTP -------------------------------------------------------------------------------------

const requestDuration = new client.Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time to answer an API request, by method, route pattern (never the raw URL; "unmatched" for none) and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

/** One answered request: `route` is the route's pattern (`/v1/calls/:id`). */
export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  requestDuration.observe({ method, route, status: String(status) }, seconds);
}

// --- Actors -----------------------------------------------------------------------------------

/** What one kind of actor holds now: its loaded actors and the messages asked of them and not yet answered. */
export interface ActorKindSample {
  kind: string;
  actors: number;
  mailbox: number;
}
const actorSamplers = new Set<() => Iterable<ActorKindSample>>();

const mailboxDepth = new client.Gauge({
  name: `${PREFIX}actor_mailbox_depth`,
  help: "Messages asked of a kind's actors and not yet answered (queued or being handled), summed over its actors.",
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
  collect() {
    mailboxDepth.reset();
    actorsLoaded.reset();
    for (const sample of actorSamplers) {
      for (const s of sample()) {
        mailboxDepth.inc({ kind: s.kind }, s.mailbox);
        actorsLoaded.inc({ kind: s.kind }, s.actors);
      }
    }
  },
});
const actorsLoaded = new client.Gauge({
  name: `${PREFIX}actors_loaded`,
  help: 'Entity actors alive in this process, by kind.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});
const actorRestarts = new client.Counter({
  name: `${PREFIX}actor_restarts_total`,
  help: 'Supervision decisions that dropped an actor\'s state, by kind: "reset" (reloaded from PostgreSQL) or "stop" (entity gone).',
  labelNames: ['kind', 'decision'] as const,
  registers: [metricsRegistry],
});

/** Reads an actor system's kinds when scraped; returns the way to stop. */
export function watchActors(sample: () => Iterable<ActorKindSample>): () => void {
  actorSamplers.add(sample);
  return () => void actorSamplers.delete(sample);
}

export function countActorRestart(kind: string, decision: 'reset' | 'stop'): void {
  actorRestarts.inc({ kind, decision });
}

// --- Calls and media --------------------------------------------------------------------------

/** Plain integers on the frame path: added to the counter when scraped. */
let framesIn = 0;
let framesOut = 0;
let framesInReported = 0;
let framesOutReported = 0;
let streamsLive = 0;

const mediaFrames = new client.Counter({
  name: `${PREFIX}media_frames_total`,
  help: 'Media frames of call audio through the media server: "in" from the carrier, "out" to it (rate() gives frames per second).',
  labelNames: ['direction'] as const,
  registers: [metricsRegistry],
  collect() {
    mediaFrames.inc({ direction: 'in' }, framesIn - framesInReported);
    mediaFrames.inc({ direction: 'out' }, framesOut - framesOutReported);
    framesInReported = framesIn;
    framesOutReported = framesOut;
  },
});
new client.Gauge({
  name: `${PREFIX}calls_in_progress`,
  help: "Calls whose carrier media stream is open on this process's media server.",
  registers: [metricsRegistry],
  collect() {
    this.set(streamsLive);
  },
});
const firstFrame = new client.Histogram({
  name: `${PREFIX}call_first_frame_seconds`,
  help: "From a stream's start message to the first audio frame sent back on it (what the callee hears first).",
  buckets: TURN_BUCKETS,
  registers: [metricsRegistry],
});
const agentFirstAudio = new client.Histogram({
  name: `${PREFIX}call_agent_first_audio_seconds`,
  help: "From the agent's take-over (the opening played) to the agent's first audio.",
  buckets: TURN_BUCKETS,
  registers: [metricsRegistry],
});
const bargeIn = new client.Histogram({
  name: `${PREFIX}call_barge_in_clear_seconds`,
  help: "Barge-in: from the speech model's speech_started (the callee talks over the agent) to the carrier's queue cleared.",
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
  registers: [metricsRegistry],
});

export function countFrameIn(): void {
  framesIn++;
}
export function countFrameOut(): void {
  framesOut++;
}
export function streamOpened(): void {
  streamsLive++;
}
export function streamClosed(): void {
  streamsLive--;
}
export function observeFirstFrame(seconds: number): void {
  firstFrame.observe(seconds);
}
export function observeAgentFirstAudio(seconds: number): void {
  agentFirstAudio.observe(seconds);
}
export function observeBargeIn(seconds: number): void {
  bargeIn.observe(seconds);
}

// --- Dialler, webhooks, money -----------------------------------------------------------------

const diallerDecisions = new client.Counter({
  name: `${PREFIX}dialler_decisions_total`,
  help: 'What the dialler decided for a claimed request: decision (dial, wait, end), the reason as the API says it, and its group (dialled, window_closed, dnc, consent, balance, caps, capacity, readiness, deadline, other).',
  labelNames: ['decision', 'reason', 'group'] as const,
  registers: [metricsRegistry],
});
export function countDiallerDecision(decision: 'dial' | 'wait' | 'end', reason: string, group: string): void {
  diallerDecisions.inc({ decision, reason, group });
}

const webhookDeliveries = new client.Counter({
  name: `${PREFIX}webhook_deliveries_total`,
  help: 'Webhook delivery attempts by outcome (succeeded, failed: retried later, dead: no more retries, refused: endpoint disabled or moved) and attempt number (the retry level, 1 = first try).',
  labelNames: ['outcome', 'attempt'] as const,
  registers: [metricsRegistry],
});
export function countWebhookDelivery(outcome: 'succeeded' | 'failed' | 'dead' | 'refused', attempt: number): void {
  webhookDeliveries.inc({ outcome, attempt: String(attempt) });
}

const ledgerLines = new client.Counter({
  name: `${PREFIX}ledger_lines_total`,
  help: 'Ledger lines committed, by cause and mode (counted after the money transaction commits).',
  labelNames: ['cause', 'mode'] as const,
  registers: [metricsRegistry],
});
export function countLedgerLine(cause: string, mode: string): void {
  ledgerLines.inc({ cause, mode });
}

// --- Database: queues and pools ---------------------------------------------------------------

/** An inbox or outbox: rows waiting, and the age of the oldest, seconds (0 when empty). */
export interface QueueSample {
  queue: string;
  depth: number;
  oldestAgeSeconds: number;
}
let queueSampler: (() => Promise<QueueSample[]>) | null = null;
/** One read of the queues serves both gauges of a scrape (prom-client collects them side by side). */
let queueRead: Promise<QueueSample[]> | null = null;
function readQueues(): Promise<QueueSample[]> {
  if (!queueSampler) return Promise.resolve([]);
  // A scrape while the database is away shows no queue lines rather than failing whole.
  queueRead ??= queueSampler()
    .catch(() => [])
    .finally(() => setImmediate(() => (queueRead = null)));
  return queueRead;
}

const queueDepth = new client.Gauge({
  name: `${PREFIX}queue_depth`,
  help: 'Rows waiting in an inbox or outbox (carrier_reports, processor_events, webhook_deliveries, email_outbox), read from PostgreSQL when scraped.',
  labelNames: ['queue'] as const,
  aggregator: 'max',
  registers: [metricsRegistry],
  async collect() {
    const samples = await readQueues();
    queueDepth.reset();
    for (const s of samples) queueDepth.set({ queue: s.queue }, s.depth);
  },
});
const queueAge = new client.Gauge({
  name: `${PREFIX}queue_oldest_age_seconds`,
  help: 'Age of the oldest row waiting in an inbox or outbox, seconds (0 when none waits).',
  labelNames: ['queue'] as const,
  aggregator: 'max',
  registers: [metricsRegistry],
  async collect() {
    const samples = await readQueues();
    queueAge.reset();
    for (const s of samples) queueAge.set({ queue: s.queue }, s.oldestAgeSeconds);
  },
});

/** The one statement that reads the queues (db/queue-depths.ts), run when scraped. */
export function watchQueues(sample: () => Promise<QueueSample[]>): () => void {
  queueSampler = sample;
  return () => {
    if (queueSampler === sample) queueSampler = null;
  };
}

/** What pg's Pool says of itself. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}
const pools = new Map<string, PoolCounts>();

const poolConnections = new client.Gauge({
  name: `${PREFIX}db_pool_connections`,
  help: 'PostgreSQL pool connections by pool and state: total (open), idle, and waiting (queries waiting for a free connection).',
  labelNames: ['pool', 'state'] as const,
  registers: [metricsRegistry],
  collect() {
    poolConnections.reset();
    for (const [name, p] of pools) {
      poolConnections.set({ pool: name, state: 'total' }, p.totalCount);
      poolConnections.set({ pool: name, state: 'idle' }, p.idleCount);
      poolConnections.set({ pool: name, state: 'waiting' }, p.waitingCount);
    }
  },
});

export function watchPool(name: string, pool: PoolCounts): () => void {
  pools.set(name, pool);
  return () => {
    if (pools.get(name) === pool) pools.delete(name);
  };
}

// --- Jobs -------------------------------------------------------------------------------------

const jobDuration = new client.Histogram({
  name: `${PREFIX}job_duration_seconds`,
  help: 'One run of a periodic job, by job name and outcome (ok, failed).',
  labelNames: ['job', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});
export function observeJob(job: string, outcome: 'ok' | 'failed', seconds: number): void {
  jobDuration.observe({ job, outcome }, seconds);
}

/** Seconds since `startMs` (a performance.now() reading). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
