import type { Config } from '../runtime/config.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { systemClock, TestClock, type Clock } from '../runtime/clock.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../runtime/embedded-db.ts';
import { ActorSystem } from '../runtime/actor-system.ts';
import { ChangeFeed } from '../runtime/change-feed.ts';
import type { Services } from './services.ts';
import { createPool, type Pool } from '../db/pool.ts';
import { migrate } from '../db/migrate.ts';
import { createSettingsRepository, TEST_CLOCK_SETTING } from '../db/settings.ts';
import { hashToken, mintToken } from '../runtime/tokens.ts';
import { accountBehaviour } from '../actors/account/account-actor.ts';
import { customerBehaviour } from '../actors/customer/customer-actor.ts';
import type { AccountMessage, AccountReplies } from '../actors/account/messages.ts';
import type { CustomerMessage, CustomerReplies } from '../actors/customer/messages.ts';
import { KeyAuthenticator } from '../http/plugins/authenticate.ts';
import { buildApp } from '../http/app.ts';
import { scheduleJobs } from './jobs.ts';
import { callBehaviour, type CallState } from '../actors/call/call-actor.ts';
import type { CallMessage, CallReplies } from '../actors/call/messages.ts';
import { createCallRequests } from '../actors/call/requests.ts';
import { Dialler } from '../actors/scheduler/dialler.ts';
import { createCarrierInbox } from '../actors/call/carrier-inbox.ts';
import { CallKeeper } from '../actors/call/call-keeper.ts';
import { startMediaServer } from '../telephony/media-server.ts';
import { SimulatedCarrier } from '../telephony/simulated/simulated-carrier.ts';
import { TwilioCarrier } from '../telephony/twilio/twilio-carrier.ts';
import { ScriptedBridge } from '../telephony/scripted/scripted-bridge.ts';
import { OpenAIRealtimeBridge } from '../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { EntityRegistry } from '../runtime/actor-system.ts';
import { SecretBox } from '../runtime/secret-box.ts';
import { WebhookSender } from '../actors/webhooks/sender.ts';
import { webhooksBehaviour, type WebhooksState } from '../actors/webhooks/webhooks-actor.ts';
import type { WebhooksMessage, WebhooksReplies } from '../actors/webhooks/messages.ts';
import { chatSessionBehaviour, type ChatSessionState } from '../actors/chat/chat-session-actor.ts';
import type { ChatSessionMessage, ChatSessionReplies } from '../actors/chat/messages.ts';

export interface StartOptions {
  logger?: Logger;
  /** Mint a fresh console token even if one is stored. */
  newConsoleToken?: boolean;
  /** Embedded database tuned for tests (no fsync). */
  fastEmbeddedDb?: boolean;
  /** Where the one-time console token is written for a person to read (stdout by default). */
  announce?: (line: string) => void;
}

export interface RunningService {
  /** Base URL the HTTP server listens on. */
  url: string;
  port: number;
  services: Services;
  stop(): Promise<void>;
}

const CONSOLE_TOKEN_SETTING = 'console_token_sha256';
/** Longest a single shutdown step may take. */
const STEP_TIMEOUT_MS = 4_000;

/**
 * Resolves the operator token: SWITCHBOARD_CONSOLE_TOKEN when set; otherwise the stored hash of
 * the token printed at the first start; otherwise (or when asked) a new token, printed once.
 */
async function consoleToken(pool: Pool, config: Config, opts: StartOptions, log: Logger): Promise<Buffer> {
  if (config.consoleToken) return hashToken(config.consoleToken);
  const settings = createSettingsRepository(pool);
  const stored = await settings.get(CONSOLE_TOKEN_SETTING);
  if (stored && !opts.newConsoleToken) {
    log.info('console token: the one printed at first start (set SWITCHBOARD_CONSOLE_TOKEN, or start with --new-console-token)');
    return Buffer.from(stored, 'hex');
  }
  const token = mintToken('sbc_');
  await settings.set(CONSOLE_TOKEN_SETTING, hashToken(token).toString('hex'));
  (opts.announce ?? ((l) => process.stdout.write(`${l}\n`)))(
    `Console token (shown once; export it as SWITCHBOARD_CONSOLE_TOKEN to use the console): ${token}`,
  );
  log.info('a new console token was generated and printed once');
  return hashToken(token);
}

/** Starts every role in this process: database, migrations, actors, HTTP. */
export async function startService(config: Config, opts: StartOptions = {}): Promise<RunningService> {
  const log = opts.logger ?? createLogger(config.logLevel);
  let clock: Clock = systemClock;
  let embedded: EmbeddedDatabase | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  /**
   * A shutdown step, bounded: one that hangs (a connection that never drains) is logged and left
   * behind, so stopping always finishes and the database is always stopped last.
   */
  const step = (name: string, fn: () => Promise<unknown> | unknown) => async () => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), STEP_TIMEOUT_MS)));
    const outcome = await Promise.race([Promise.resolve().then(fn).then(() => 'done' as const), timedOut]).catch((err) => {
      log.warn({ err, step: name }, 'shutdown step failed');
      return 'failed' as const;
    });
    clearTimeout(timer);
    if (outcome === 'timeout') log.warn({ step: name, timeout_ms: STEP_TIMEOUT_MS }, 'shutdown step did not finish in time; going on');
  };
  try {
    let url = config.databaseUrl;
    if (!url) {
      embedded = await startEmbeddedDatabase(config.dataDir, log, { fast: opts.fastEmbeddedDb });
      url = embedded.url;
    }
    const pool = createPool(url, config.dbPoolSize);
    cleanups.push(step('database pool', () => pool.end()));
    const applied = await migrate(pool);
    if (applied.length) log.info({ applied }, 'migrations applied');
    // A test clock is shared by every process on the database, like a Stripe test clock.
    if (config.testClock) clock = new TestClock(Number((await createSettingsRepository(pool).get(TEST_CLOCK_SETTING)) ?? 0));

    const actors = new ActorSystem(log.child({ component: 'actors' }), config.actorIdleMs);
    cleanups.push(step('actors', () => actors.stop()));
    const deps = { pool, clock, log, config };
    const keys = new KeyAuthenticator(pool, clock);
    const accounts = actors.register<AccountMessage, AccountReplies, any>(
      accountBehaviour(deps, { credentialsChanged: (accountId) => keys.forgetAccount(accountId) }),
    );
    const customers = actors.register<CustomerMessage, CustomerReplies, any>(customerBehaviour(deps));
    // Encrypts secrets at rest and derives per-call media stream tokens (one key for every process).
    const secrets = SecretBox.load(config.encryptionKey, config.dataDir);

    // Calls: carriers and agents per mode. Test mode never reaches a carrier; live mode uses
    // Twilio and OpenAI when configured and otherwise plays calls the simulated way.
    let calls: EntityRegistry<CallMessage, CallReplies, CallState> | undefined;
    const callsRef = () => calls!;
    const handOver = (ask: () => Promise<unknown>) => void ask().catch((err) => log.error({ err }, 'a media stream could not be handed to its call'));
    // What the carrier reports is stored first and processed after (the inbox); the simulated
    // carrier reports in-process, so its reports wait in memory while the database is away.
    const inbox = createCarrierInbox({ ...deps, calls: callsRef });
    cleanups.push(step('carrier inbox', () => inbox.stop()));
    const simulated = new SimulatedCarrier({
      log,
      onStatus: (r) => inbox.receiveLocal({ kind: 'status', report: r }),
      onRecording: (r) => inbox.receiveLocal({ kind: 'recording', report: r }),
      talkUntilLimitMs: config.simulatedTalkMs,
    });
    const scripted = new ScriptedBridge({ clock, log });
    const liveCarrier = config.twilio ? new TwilioCarrier({ ...config.twilio, log }) : simulated;
    const liveBridge = config.openai
      ? new OpenAIRealtimeBridge({ apiKey: config.openai.apiKey, baseUrl: config.openai.realtimeUrl, model: config.openai.realtimeModel, log })
      : scripted;
    if (!config.twilio || !config.openai) {
      log.warn(
        { carrier: liveCarrier.name, agent: liveBridge.name },
        'live-mode calls are simulated where credentials are missing (set TWILIO_ACCOUNT_SID/TWILIO_AUTH_TOKEN and OPENAI_API_KEY)',
      );
    }
    const liveCalls = new Set<string>();
    let mediaUrl = config.mediaUrl ?? '';
    let keeper: CallKeeper | undefined;
    calls = actors.register<CallMessage, CallReplies, CallState>(
      callBehaviour({
        ...deps,
        carriers: { test: simulated, live: liveCarrier },
        bridges: { test: scripted, live: liveBridge },
        mediaUrl: () => mediaUrl,
        liveCalls,
        calls: callsRef,
        streamToken: (callId) => secrets.mac('media-stream', callId),
        mediaStopped: (callId) => keeper?.mediaStopped(callId),
      }),
    );
    // The media server lives where calls are dialled: the carrier streams to the process that holds the call.
    if (config.roles.has('dialler')) {
      const media = await startMediaServer({
        host: config.host,
        port: config.mediaPort,
        log,
        onSession: (session) => handOver(() => callsRef().ask(session.callId, { type: 'media_connected', session })),
      });
      cleanups.push(step('media server', () => media.close()));
      if (!config.mediaUrl) {
        const origin = new URL(config.publicUrl);
        mediaUrl = `${origin.protocol === 'https:' ? 'wss' : 'ws'}://${origin.hostname}:${media.port}/media`;
      }
    }

    const webhooks = actors.register<WebhooksMessage, WebhooksReplies, WebhooksState>(
      webhooksBehaviour({ ...deps, secrets, allowPrivate: config.allowPrivateWebhooks }),
    );
    const chatSessions = actors.register<ChatSessionMessage, ChatSessionReplies, ChatSessionState>(chatSessionBehaviour(deps));
    // The sender's bookkeeping commits asynchronously: losing a claim or an attempt record in a
    // crash only means a delivery is sent again, which at-least-once delivery allows.
    const senderPool = createPool(url, Math.ceil(config.dbPoolSize / 2), { asyncCommit: true });
    cleanups.push(step('sender pool', () => senderPool.end()));
    const sender = new WebhookSender({ ...deps, pool: senderPool, secrets }, { pollMs: config.senderPollMs, concurrency: 64, allowPrivate: config.allowPrivateWebhooks });

    const feed = new ChangeFeed(url, log);
    feed.on('delivery', () => sender.poke());
    feed.on('clock', (offset) => (clock instanceof TestClock ? clock.catchUp(Number(offset)) : undefined));
    feed.on('account', (id) => {
      keys.forgetAccount(id);
      accounts.reload(id);
    });
    // Notifications sent while the feed was away are lost: drop everything it guards.
    feed.onReset(() => {
      keys.forgetAll();
      accounts.reloadAll();
      sender.poke();
      if (clock instanceof TestClock) {
        const testClock = clock;
        void createSettingsRepository(pool)
          .get(TEST_CLOCK_SETTING)
          .then((offset) => testClock.catchUp(Number(offset ?? 0)))
          .catch((err) => log.warn({ err }, 'test clock not refreshed after the change feed reconnected'));
      }
    });
    await feed.start();
    cleanups.push(step('change feed', () => feed.stop()));

    const tokenHash = await consoleToken(pool, config, opts, log);
    const dialler = new Dialler({ ...deps, accounts, calls, liveCalls }, { maxCalls: config.maxCallsPerProcess, pollMs: config.diallerPollMs, batch: 20 });
    keeper = new CallKeeper({ ...deps, owner: dialler.id, carriers: { test: simulated, live: liveCarrier }, inbox }, { pollMs: config.keeperPollMs });
    const services: Services = {
      ...deps,
      accounts,
      customers,
      keys,
      consoleTokenHash: () => tokenHash,
      testClock: clock instanceof TestClock ? clock : null,
      calls,
      callRequests: createCallRequests(deps),
      carriers: { test: simulated, live: liveCarrier },
      dialNow: () => dialler.tick(),
      webhooks,
      sendNow: () => sender.drain(),
      chatSessions,
      carrierInbox: inbox,
      keepNow: () => keeper!.tick(),
    };
    if (config.roles.has('dialler')) {
      cleanups.push(step('jobs', scheduleJobs(services, config.jobIntervalMs)));
      dialler.start();
      cleanups.push(step('dialler', () => dialler.stop()));
      keeper.start();
      cleanups.push(step('call keeper', () => keeper!.stop()));
    }
    if (config.roles.has('sender')) {
      sender.start();
      cleanups.push(step('webhook sender', () => sender.stop()));
    }
    let port = 0;
    if (config.roles.has('api')) {
      const app = await buildApp(services);
      await app.listen({ port: config.port, host: config.host });
      cleanups.push(step('http server', () => app.close()));
      const address = app.server.address();
      port = typeof address === 'object' && address ? address.port : config.port;
    }
    log.info(
      { roles: [...config.roles], port, publicUrl: config.publicUrl, mediaUrl, embeddedDatabase: Boolean(embedded) },
      'switchboard started',
    );

    let stopping: Promise<void> | undefined;
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      services,
      stop: () =>
        (stopping ??= (async () => {
          // Reverse order: stop taking requests, then actors, then connections, then the database.
          for (const cleanup of cleanups.reverse()) await cleanup();
          await embedded?.stop();
          log.info('switchboard stopped');
        })()),
    };
  } catch (err) {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await embedded?.stop();
    throw err;
  }
}

