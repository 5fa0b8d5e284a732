import { liveCarrierKind, type Config } from '../runtime/config.ts';
import { createSettingsRepository, LIVE_CARRIER_SETTING } from '../db/settings.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../runtime/embedded-db.ts';
import { ActorSystem } from '../runtime/actor-system.ts';
import { ChangeFeed } from '../runtime/change-feed.ts';
import { logHostMoves } from '../runtime/database-hosts.ts';
import { SecretBox } from '../runtime/secret-box.ts';
import { createCalendarOpener } from '../calendars/open-calendar.ts';
import { TestClock, realClock, type Clock } from '../runtime/clock.ts';
import { createPool, sessionTimeZoneUnlessUtc, type Pool } from '../db/pool.ts';
import { migrate, migrateAt } from '../db/migrate.ts';
import { accountBehaviour } from '../actors/account/account-actor.ts';
import type { AccountMessage, AccountReplies } from '../actors/account/messages.ts';
import { createAccountDirectory } from '../actors/account/account-directory.ts';
import { customerBehaviour } from '../actors/customer/customer-actor.ts';
import type { CustomerMessage, CustomerReplies } from '../actors/customer/messages.ts';
import { createOnboardingPage } from '../actors/customer/onboarding-page.ts';
import { createCoverageService } from '../actors/coverage/coverage-service.ts';
import { createDncList, importRegistry, listRegistries } from '../actors/dnc/dnc-list.ts';
import { fullComplianceRecord, fullComplianceRecordOf } from '../actors/call/compliance-view.ts';
import { createAppointments } from '../actors/call/appointments.ts';
import { createConsoleCalls } from '../actors/console/calls.ts';
import { createConsolePeople } from '../actors/console/people.ts';
import { createConsoleAccess } from '../actors/console/access.ts';
import { createCustomerList } from '../actors/customer/customer-list.ts';
import { createCustomerDirectory } from '../actors/customer/customer-directory.ts';
import { WebhookSender } from '../actors/webhooks/sender.ts';
import { EmailSender } from '../actors/email/email-sender.ts';
import { createEmailList } from '../actors/email/email-list.ts';
import { createMailTransport } from '../email/transport.ts';
import { webhooksBehaviour, type WebhooksState } from '../actors/webhooks/webhooks-actor.ts';
import type { WebhooksMessage, WebhooksReplies } from '../actors/webhooks/messages.ts';
import { createEventHistory } from '../actors/webhooks/event-history.ts';
import { createEmergencyClosures } from '../actors/scheduler/emergency-closures.ts';
import { chatSessionBehaviour, type ChatSessionState } from '../actors/chat/chat-session-actor.ts';
import type { ChatSessionMessage, ChatSessionReplies } from '../actors/chat/messages.ts';
import { createChatSessions } from '../actors/chat/sessions.ts';
import { createChatMessages } from '../actors/chat/chat-messages.ts';
import { assistantFor } from '../actors/chat/assistant.ts';
import { createMoneyWriter } from '../money/writer.ts';
import { createNumbers, type Numbers } from '../actors/numbers/numbers.ts';
import { createWebsites, type Websites } from '../actors/websites/websites.ts';
import { createSiteBuilder } from '../actors/websites/site-builder.ts';
import { createCnameCheck } from '../actors/websites/dns-check.ts';
import { createBrandDomains } from '../actors/account/brand-domain.ts';
import { pollLoop } from '../runtime/poll-loop.ts';
import { readinessFollowsMoney } from '../actors/customer/readiness-check.ts';
import { KeyAuthenticator } from '../http/plugins/authenticate.ts';
import { buildApp } from '../http/app.ts';
import { closeGracefully } from '../http/plugins/graceful-close.ts';
import { drainCalls } from '../actors/call/call-drain.ts';
import type { Services } from './services.ts';
import { calendarOAuthProviders } from '../calendars/oauth.ts';
import { createCalendarPage } from '../actors/customer/calendar-page.ts';
import { CALENDAR_OAUTH_CALLBACK } from '../http/pages/calendar.ts';
import { JOB_NAMES, runClockJobs, runJob, scheduleJobs, type JobName } from './jobs.ts';
import { createCalendarSync } from '../actors/call/calendar-sync.ts';
import { createTestClocks } from '../actors/test-clocks/test-clocks.ts';
import { createSimulatedProvider } from '../actors/payments/simulated-provider.ts';
import { composeCalls } from './calls.ts';
import { createProspectResearcher } from '../actors/call/prospect-research.ts';
import { adminToken } from './admin-token.ts';
import { createConsoleBilling } from '../actors/console/billing.ts';
import { openClock, refreshTestClock, testClockControl } from './test-clock.ts';
import { createPayments, type Payments } from '../actors/payments/payments.ts';
import { paymentProviders } from './payments.ts';
import { startMetrics } from './metrics.ts';
import { StartRefused, waitForDatabase } from './database-wait.ts';

export interface StartOptions {
  logger?: Logger;
  /** Mint a fresh admin token even if one is stored. */
  newAdminToken?: boolean;
  /** Embedded database tuned for tests (no fsync). */
  fastEmbeddedDb?: boolean;
  /** Where the one-time admin token is written for a person to read (stdout by default). */
  announce?: (line: string) => void;
  /** Real time (runtime/clock.ts `realClock` unless given): a test may hand a clock it moves to reach webhook retries or a bonus credit's expiry. */
  realClock?: Clock;
  /** Gives up start-up while it waits for an unreachable database (a signal before the process is up). */
  signal?: AbortSignal;
}

export interface RunningService {
  /** Base URL the HTTP server listens on. */
  url: string;
  port: number;
  /** Base URL of the metrics port (SWITCHBOARD_METRICS_PORT); undefined when it is off. */
  metricsUrl?: string;
  services: Services;
  stop(): Promise<void>;
}

/** Longest a single shutdown step may take. */
const STEP_TIMEOUT_MS = 4_000;
/** Longest the HTTP server's graceful close may take: its linger and grace, then requests in flight. */
const HTTP_CLOSE_TIMEOUT_MS = 8_000;

/**
 * Starts the roles of this process (SWITCHBOARD_ROLES: api, dialler, sender) over one database:
 * the kernel first (database, migrations, clock, actor system, change feed), then the rooms'
 * actors and services, then each role's loops and the HTTP app, which is handed one object
 * that satisfies every route's declared deps.
 */
export async function startService(config: Config, opts: StartOptions = {}): Promise<RunningService> {
  const log = opts.logger ?? createLogger(config.logLevel);
  let embedded: EmbeddedDatabase | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  /**
   * A shutdown step, bounded: one that hangs (a connection that never drains) is logged and left
   * behind, so stopping always finishes and the database is always stopped last.
   */
  const step = (name: string, fn: () => Promise<unknown> | unknown, timeoutMs = STEP_TIMEOUT_MS) => async () => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const outcome = await Promise.race([Promise.resolve().then(fn).then(() => 'done' as const), timedOut]).catch((err) => {
      log.warn({ err, step: name }, 'shutdown step failed');
      return 'failed' as const;
    });
    clearTimeout(timer);
    if (outcome === 'timeout') log.warn({ step: name, timeout_ms: timeoutMs }, 'shutdown step did not finish in time; going on');
  };
  const onStop = (name: string, fn: () => unknown, timeoutMs?: number) => void cleanups.push(step(name, fn, timeoutMs));
  try {
    let url = config.databaseUrl;
    if (!url) {
      embedded = await startEmbeddedDatabase(config.dataDir, log, { fast: opts.fastEmbeddedDb });
      url = embedded.url;
    }
    // What needs a session (the change feed's LISTEN, the migrations' lock) goes to PostgreSQL
    // itself when DATABASE_URL is a transaction-mode pooler (docs/decisions.md, "PgBouncer in transaction mode").
    const directUrl = config.databaseUrl ? (config.directDatabaseUrl ?? url) : url;
    const pooler = config.databaseUrl ? config.databasePooler : 'none';
    const pool = createPool(url, config.dbPoolSize, { pooler });
    onStop('database pool', () => pool.end());
    // A failover seen by this process: one line each time the host believed primary moves.
    for (const each of new Set([url, directUrl])) onStop('database host log', logHostMoves(each, log));
    // A database not up yet (a machine booting, a failover): wait and retry, never exit into a restart loop.
    await waitForDatabase(pool, log, { signal: opts.signal });
    if (pooler === 'transaction') await requireUtcSessions(pool);
    const applied =
      directUrl === url ? await migrate(pool) : await migrateAt(directUrl, { waitFor: (direct) => waitForDatabase(direct, log, { signal: opts.signal }) });
    if (applied.length) log.info({ applied }, 'migrations applied');
    // Readiness and the call path read whether live mode has a carrier with their facts.
    await createSettingsRepository(pool).set(LIVE_CARRIER_SETTING, liveCarrierKind(config) ?? 'none');
    const clock = await openClock(config.testClock, pool);

    const actors = new ActorSystem(log.child({ component: 'actors' }), config.actorIdleMs);
    onStop('actors', () => actors.stop());
    // deps.calendars opens a connection's calendar (CalDAV, Google, Microsoft, simulated) for the actors (issue 24).
    const deps = { pool, clock, realClock: opts.realClock ?? realClock, log, config, calendars: createCalendarOpener({ pool, log, config }) };
    // The one money writer: every change of money goes through it; a balance crossing one call's
    // hold refreshes the customer's readiness in the same transaction.
    // A top-up pays rent and hosting left unpaid, in its own transaction (the numbers and
    // websites rooms, built below).
    let numbers: Numbers | undefined;
    let websites: Websites | undefined;
    // A line under the automatic top-up's threshold asks the payments room (built below) for a card charge.
    let payments: Payments | undefined;
    const money = createMoneyWriter(
      {
        ...readinessFollowsMoney,
        fundsAdded: async (db, accountId, now) => {
          await numbers!.fundsAdded(db, accountId, now);
          await websites!.fundsAdded(db, accountId, now);
        },
        autoTopUpWanted: (db, accountId, now) => payments!.autoTopUpWanted(db, accountId, now),
      },
      deps.realClock,
    );
    const keys = new KeyAuthenticator(pool, clock, Date.now, deps.realClock);
    const accounts = actors.register<AccountMessage, AccountReplies, any>(
      accountBehaviour({ ...deps, money }, { credentialsChanged: (accountId) => keys.forgetAccount(accountId) }),
    );
    const { calendars } = deps;
    const customers = actors.register<CustomerMessage, CustomerReplies, any>(
      customerBehaviour(deps, {
        provisionNumber: (customerId) => numbers!.provisionNumber(customerId),
        seal: (plain) => secrets.seal(plain),
        calendars,
        secrets: { seal: (plain) => secrets.seal(plain), open: (sealed) => secrets.open(sealed) },
      }),
    );
    // Encrypts secrets at rest and derives per-call media stream tokens (one key for every process).
    const secrets = SecretBox.load(config.encryptionKey, config.dataDir);
    const customerDirectory = createCustomerDirectory(pool);
    const calling = await composeCalls(
      deps,
      actors,
      {
        accounts,
        secrets,
        customerDirectory,
        money,
        // The test-mode carrier's verification outcome, for the number its callback URL names.
        onCallerIdValidation: (report, request) => {
          const numberId = new URL(request.statusCallbackUrl).searchParams.get('number_id');
          if (!numberId || !numbers) return;
          numbers.verificationReported(numberId, report).catch((err) => log.error({ err, number_id: numberId }, 'a caller id verification could not be recorded; the expiry job asks the carrier'));
        },
      },
      onStop,
    );
    const numbersRoom = createNumbers({ ...deps, carriers: calling.carriers, money, secrets });
    numbers = numbersRoom;
    const cnameCheck = createCnameCheck(config.dnsServers);
    const websitesRoom = createWebsites({ ...deps, money, secrets, builder: createSiteBuilder(deps), cnameCheck });
    websites = websitesRoom;
    const brandDomains = createBrandDomains(deps, cnameCheck);
    // The simulated card processor of test mode: its events land in the payments room's inbox, as
    // Stripe's webhooks do (until taken they wait in simulated_events and are handed over again).
    const simulatedCheckout = createSimulatedProvider({
      pool,
      publicUrl: () => config.publicUrl,
      clock: deps.realClock,
      log,
      onEvent: (event) => payments!.receiveSimulatedEvent(event),
    });
    payments = createPayments({ ...deps, money, providers: paymentProviders(config, simulatedCheckout), handOverPending: () => simulatedCheckout.deliverPending() });
    onStop('payments', () => payments!.stop());
    const calendarSync = createCalendarSync({ pool, log, calendars: deps.calendars, secrets });
    const rooms = { numbers: numbersRoom, websites: websitesRoom, brandDomains, calendars, secrets, calendarSync };

    const webhooks = actors.register<WebhooksMessage, WebhooksReplies, WebhooksState>(
      webhooksBehaviour({ ...deps, secrets, allowPrivate: config.allowPrivateWebhooks }),
    );
    const chatSessions = actors.register<ChatSessionMessage, ChatSessionReplies, ChatSessionState>(chatSessionBehaviour(deps));
    // The sender's bookkeeping commits asynchronously: losing a claim or an attempt record in a
    // crash only means a delivery is sent again, which at-least-once delivery allows (not behind a
    // transaction-mode pooler, where it commits synchronously: docs/decisions.md).
    const senderPool = createPool(url, Math.ceil(config.dbPoolSize / 2), { asyncCommit: true, pooler });
    onStop('sender pool', () => senderPool.end());
    const sender = new WebhookSender({ ...deps, pool: senderPool, secrets }, { pollMs: config.senderPollMs, concurrency: 64, allowPrivate: config.allowPrivateWebhooks });

    // Emails: the outbox's sender, on the main pool (a lost record of a sent email would send it twice).
    const mailTransport = createMailTransport({ smtpUrl: config.email.smtpUrl, dataDir: config.dataDir, log });
    onStop('mail transport', () => mailTransport.close());
    const mailer = new EmailSender({ ...deps, secrets, transport: mailTransport }, { pollMs: config.senderPollMs, concurrency: 8 });

    const feed = new ChangeFeed(directUrl, log);
    feed.on('delivery', () => sender.poke());
    feed.on('email', () => mailer.poke());
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
      mailer.poke();
      refreshTestClock(clock, pool, log);
    });
    await feed.start();
    onStop('change feed', () => feed.stop());

    const tokenHash = await adminToken(pool, config, opts, log);
    const { dialler, keeper } = calling;
    const researcher = createProspectResearcher({ ...deps, money });
    const services: Services = {
      ...deps,
      keys,
      adminTokenHash: () => tokenHash,
      consolePeople: createConsolePeople({ ...deps, secrets }),
      consoleAccess: createConsoleAccess({ ...deps, secrets }),
      consoleBilling: createConsoleBilling(deps),
      simulatedCheckout,
      testClocks: createTestClocks(deps, async (clock) => {
        // An advanced clock's due work, before the advance answers: its jobs, then dialler rounds
        // (two: one already running may have claimed before the clock moved). A process without
        // the dialler role leaves the dialling to the dialler's next poll.
        await runClockJobs({ ...deps, money, ...rooms }, clock);
        if (config.roles.has('dialler')) {
          await dialler.tick();
          await dialler.tick();
        }
      }),
      accounts,
      accountDirectory: createAccountDirectory(pool),
      customers,
      onboardingPage: createOnboardingPage(deps),
      calendarPage: createCalendarPage({ ...deps, secrets, oauth: calendarOAuthProviders(config), redirectUri: () => `${config.publicUrl}${CALENDAR_OAUTH_CALLBACK}` }),
      coverage: createCoverageService(deps),
      importDncRegistry: (file) => importRegistry(deps, file),
      listDncRegistries: () => listRegistries(deps),
      // The operator reads the full record; the API's stays the proof of consent alone.
      complianceRecord: (callId) => fullComplianceRecord(pool, callId),
      callComplianceRecords: { forAccount: (accountId, mode, callId) => fullComplianceRecordOf(pool, accountId, mode, callId) },
      calls: calling.calls,
      callRequests: calling.callRequests,
      customerDirectory,
      customerList: createCustomerList(deps),
      appointments: createAppointments(pool),
      consoleCalls: createConsoleCalls(pool, config, calling.callRequests),
      dnc: createDncList(deps),
      carriers: calling.carriers,
      carrierInbox: calling.carrierInbox,
      inbound: calling.inbound,
      payments,
      payNow: () => payments!.payNow(),
      webhooks,
      eventHistory: createEventHistory(pool),
      emergencyClosures: createEmergencyClosures(deps),
      chat: createChatSessions(deps, chatSessions, createChatMessages(deps, { assistant: assistantFor(config), money })),
      jobs: { names: JOB_NAMES, run: (name) => runJob({ ...deps, money, ...rooms }, name as JobName) },
      numbers: numbersRoom,
      websites: websitesRoom,
      brandDomains,
      buildNow: () => websitesRoom.buildWaiting(),
      testClock: testClockControl(clock, pool),
      dialNow: () => dialler.tick(),
      keepNow: () => keeper.tick(),
      sendNow: () => sender.drain(),
      emails: createEmailList(pool),
      mailNow: () => mailer.tick(),
      researchNow: (research) => (research ? createProspectResearcher({ ...deps, money }, { research }) : researcher).researchDue(),
    };
    // The payments inbox retries on any process; automatic top-ups are charged by the dialler role.
    payments.start({ worker: config.roles.has('dialler') });
    if (config.roles.has('dialler')) {
      onStop('jobs', scheduleJobs({ ...deps, money, ...rooms }, config.jobIntervalMs));
      dialler.start();
      onStop('dialler', () => dialler.stop());
      onStop('prospect research', pollLoop(() => researcher.researchDue().then(() => undefined), config.diallerPollMs, log, 'prospect research'));
      keeper.start();
      onStop('call keeper', () => keeper.stop());
    }
    if (config.roles.has('builder')) {
      // Website builds: claimed with SKIP LOCKED by any builder process; a claim lapses if it dies.
      onStop('website builder', pollLoop(() => websitesRoom.buildWaiting().then(() => undefined), config.builderPollMs, log, 'website builder'));
    }
    if (config.roles.has('sender')) {
      sender.start();
      onStop('webhook sender', () => sender.stop());
      mailer.start();
      onStop('email sender', () => mailer.stop());
    }
    // The operator's metrics, on a port of their own (off unless SWITCHBOARD_METRICS_PORT is set).
    const metrics = await startMetrics(config, { main: pool, sender: senderPool }, log);
    onStop('metrics', metrics.stop);
    let port = 0;
    if (config.roles.has('api')) {
      const app = await buildApp(services);
      await app.listen({ port: config.port, host: config.host });
      // In-flight requests finish; nothing during the close gets fastify's own 503 (graceful-close.ts).
      onStop('http server', () => closeGracefully(app), HTTP_CLOSE_TIMEOUT_MS);
      const address = app.server.address();
      port = typeof address === 'object' && address ? address.port : config.port;
    }
    if (config.roles.has('dialler')) {
      // First of all on a stop (steps run in reverse): claim nothing more, let running calls finish, hand the rest over.
      onStop('call drain', () => drainCalls({ pool, log, owner: dialler.id, dialler, keeper }, config.drainMs), config.drainMs + STEP_TIMEOUT_MS);
    }
    log.info(
      { roles: [...config.roles], port, publicUrl: config.publicUrl, mediaUrl: calling.mediaUrl(), embeddedDatabase: Boolean(embedded) },
      'switchboard started',
    );

    let stopping: Promise<void> | undefined;
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      metricsUrl: metrics.server?.url,
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

/**
 * Behind a transaction-mode pooler the pools send no `-c TimeZone=UTC` (db/pool.ts), so their
 * sessions have the role's time zone: start only if that is UTC, and otherwise say how to make it.
 */
async function requireUtcSessions(pool: Pool): Promise<void> {
  const wrong = await sessionTimeZoneUnlessUtc(pool);
  if (!wrong) return;
  const role = `"${wrong.role.replace(/"/g, '""')}"`;
  throw new StartRefused(
    `the database sessions through the pooler (SWITCHBOARD_DATABASE_POOLER=transaction) are in time zone ${wrong.zone}, not UTC, and no startup option can set it there: run ALTER ROLE ${role} SET timezone = 'UTC'; on PostgreSQL, then start again`,
    { event: 'database_time_zone_not_utc', time_zone: wrong.zone, role: wrong.role },
  );
}
