import path from 'node:path';
import { DatabaseUrlError, parseDatabaseUrl } from './database-hosts.ts';
import { emailAddressProblem, hasControlCharacters } from './email-address.ts';

/** Every setting the service reads from its environment, resolved once at start-up. */
export interface Config {
  /** TCP port of the HTTP server; 0 picks a free one. */
  port: number;
  /** Interface the HTTP server binds to. */
  host: string;
  /** Origin of every URL the service hands out (onboarding links, media streams). No trailing slash. */
  publicUrl: string;
  /** PostgreSQL connection string; when absent an embedded server is started under `dataDir`. */
  databaseUrl: string | undefined;
  /** SWITCHBOARD_DIRECT_DATABASE_URL (default DATABASE_URL): PostgreSQL itself, for what needs a session (the change feed's LISTEN, the migrations' lock). */
  directDatabaseUrl: Config['databaseUrl'];
  /** SWITCHBOARD_DATABASE_POOLER: `transaction` when DATABASE_URL is a transaction-mode pooler (PgBouncer): no named statements, no startup options. */
  databasePooler: 'none' | 'transaction';
  /** Where the embedded database and other local state live. */
  dataDir: string;
  /** Operator token for /admin/v1; when absent `start` generates one and prints it once. */
  adminToken: string | undefined;
  /** pino level. */
  logLevel: string;
  /** Honour X-Forwarded-For when deciding the client address (behind a proxy only). */
  trustProxy: boolean;
  /** Lets tests move time through the console (never set in production). */
  testClock: boolean;
  /** Idle time after which an entity actor is stopped, ms. */
  actorIdleMs: number;
  /** How often the periodic jobs (hold release, bonus expiry, month close) run, ms. */
  jobIntervalMs: number;
  /** Largest accepted request body, bytes. */
  bodyLimitBytes: number;
  /** Longest a client may take to send one whole request (headers and body), ms; then 408 and the socket closes. */
  requestTimeoutMs: number;
  /** Longest a connection may sit with nothing sent either way while a request is open, ms. */
  connectionTimeoutMs: number;
  /** Failed authentications (unknown API key or wrong admin token) one client address may make per minute before 429. */
  authFailuresPerMinute: number;
  /** Twilio credentials; without them (and without `simulatedLiveCarrier`) live numbers and calls are refused. */
  twilio: { accountSid: string; authToken: string; apiBaseUrl: string | undefined } | null;
  /**
   * Live mode plays calls and sells fictional numbers through the simulated carrier when Twilio is
   * not configured (development and tests only; never in production: live money is charged).
   */
  simulatedLiveCarrier: boolean;
  /**
   * Stripe, the card processor of live mode (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET,
   * STRIPE_PUBLISHABLE_KEY; STRIPE_API_BASE points the SDK elsewhere, tests only). Without the
   * secret key live card payments are not configured (the operator's top-up command adds funds);
   * test mode always uses the simulated processor.
   */
  stripe: { secretKey: string; webhookSecret: string | undefined; publishableKey: string | undefined; apiBase: string | undefined } | null;
  /**
   * The OAuth clients of Google Calendar and Microsoft 365 (issue 24); each null without its client
   * id and secret, and then the calendar page does not offer it (CalDAV and test mode need nothing).
   */
  calendars: CalendarsConfig;
  /** OpenAI credentials; without them the scripted agent and the built-in coach answer. */
  openai: { apiKey: string; baseUrl: string | undefined; realtimeUrl: string | undefined; realtimeModel: string; chatModel: string } | null;
  /**
   * Port of the carrier media WebSocket server (0: a free one). Under pm2 each instance of an app
   * (NODE_APP_INSTANCE n) listens on SWITCHBOARD_MEDIA_PORT + n (`mediaSettings`).
   */
  mediaPort: number;
  /**
   * The media server's URL as the carrier reaches it (ws[s]://host[:port]/media); derived when
   * unset. `{port}` and `{instance}` in SWITCHBOARD_MEDIA_URL become this instance's media port and
   * number (`mediaSettings`).
   */
  mediaUrl: string | undefined;
  /** Most calls one process runs at once. */
  maxCallsPerProcess: number;
  /**
   * Most PostgreSQL connections of this process's main pool; the webhook sender's pool takes half
   * as many more and the change feed one. Every process on a database shares its max_connections.
   */
  dbPoolSize: number;
  /** Where request counters live: `memory` (each process its own) or `postgres` (shared by every process). */
  rateLimitStore: 'memory' | 'postgres';
  /** How often the dialler looks at the queue, ms. */
  diallerPollMs: number;
  /** How often the webhook sender looks for due deliveries, ms (it is also woken at once by new events). */
  senderPollMs: number;
  /** How often the call keeper runs (inbox retries, leases, recovery), ms. */
  keeperPollMs: number;
  /** How long a stopping dialler lets its running calls finish before handing them over (actors/call/call-drain.ts). */
  drainMs: number;
  /** Wall time of the simulated talk-until-limit call (digit 6), ms: lengthened by tests that need a call in progress. */
  simulatedTalkMs: number;
  /** Wall time a simulated call rings before its scenario answers or gives up, ms (the dialler's bench holds calls ringing). */
  simulatedRingMs: number;
  /** Lets webhooks reach loopback and private addresses (local development and tests only). */
  allowPrivateWebhooks: boolean;
  /** Key of the secrets stored encrypted (base64, 32 bytes); a key file in the data dir otherwise. */
  encryptionKey: string | undefined;
  /** What this process does: `api` (HTTP), `dialler` (queue, calls, media server, jobs), `sender` (webhooks), `builder` (website builds). */
  roles: ReadonlySet<Role>;
  /**
   * Where live websites are served: `https://<slug>.<sitesDomain>` (a wildcard DNS record and
   * certificate in front of the API); unset, a site lives at `<publicUrl>/sites/<slug>/`.
   */
  sitesDomain: string | undefined;
  /** DNS servers (`host` or `host:port`) the customers' domains are checked against; the system's when unset. */
  dnsServers: string[] | undefined;
  /** How often an idle builder looks for work, ms. */
  builderPollMs: number;
  /** The emails the service sends (docs/api.md, "Email"). */
  email: EmailConfig;
  /**
   * The operator's metrics (runtime/metrics-server.ts): off unless SWITCHBOARD_METRICS_PORT is set.
   * `port` is the base: a process listens on port + `instance` (pm2's NODE_APP_INSTANCE); `workers`
   * (SWITCHBOARD_METRICS_WORKERS) instances of the app are added up by `/metrics/cluster`.
   */
  metrics: { port: number; host: string; instance: number; workers: number } | null;
}

/** The calendar OAuth clients; the URLs are the providers' unless set (tests point them at fakes). */
export interface CalendarsConfig {
  /** GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET; GOOGLE_OAUTH_URL, GOOGLE_TOKEN_URL, GOOGLE_CALENDAR_API_URL. */
  google: { clientId: string; clientSecret: string; authUrl: string; tokenUrl: string; apiUrl: string } | null;
  /** MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET; MICROSOFT_TENANT, MICROSOFT_LOGIN_URL, MICROSOFT_GRAPH_URL. */
  microsoft: { clientId: string; clientSecret: string; tenant: string; loginUrl: string; graphUrl: string } | null;
}

/** How the service sends email: SMTP, or (without SMTP_URL) .eml files under `<dataDir>/outbox-mail/`. */
export interface EmailConfig {
  /** `smtp://` or `smtps://` with optional `user:password@` (nodemailer's URL form); undefined: files. Never logged. */
  smtpUrl: string | undefined;
  /** The address every email is sent from (SWITCHBOARD_EMAIL_FROM; default `no-reply@<publicUrl host>`). */
  from: string;
  /** The platform's name: the display name of its own emails and the name they sign with (SWITCHBOARD_PLATFORM_NAME). */
  platformName: string;
}

/** A setting the operator gave that cannot be used: said in one line, without a stack trace. */
export class SettingError extends Error {
  override name = 'SettingError';
}

export type Role = 'api' | 'dialler' | 'sender' | 'builder';
const ROLES: readonly Role[] = ['api', 'dialler', 'sender', 'builder'];

function roles(value: string | undefined): ReadonlySet<Role> {
  if (!value) return new Set(ROLES);
  const list = value.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = list.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length || list.length === 0) throw new SettingError(`SWITCHBOARD_ROLES takes api, dialler, sender and builder, got "${value}"`);
  return new Set(list as Role[]);
}

/**
 * DATABASE_URL, one host or libpq's list of hosts (`h1:5432,h2:5433` with `target_session_attrs`):
 * a list that cannot be used stops start-up here in one line, never as a stack from inside pg's
 * pool (runtime/database-hosts.ts; docs/decisions.md, "Failover: a DATABASE_URL listing both hosts").
 */
function databaseUrl(value: string | undefined, name = 'DATABASE_URL'): string | undefined {
  if (!value) return undefined;
  try {
    parseDatabaseUrl(value);
  } catch (err) {
    if (err instanceof DatabaseUrlError) throw new SettingError(`${name}: ${err.message}`);
    throw err;
  }
  return value;
}

/**
 * What sits between the pools and PostgreSQL (docs/decisions.md, "PgBouncer in transaction mode").
 * A transaction-mode pooler hands each transaction to any server connection, so what needs a
 * session must go around it: SWITCHBOARD_DIRECT_DATABASE_URL is then required.
 */
function databasePooler(env: NodeJS.ProcessEnv): 'none' | 'transaction' {
  const pooler = oneOf(env.SWITCHBOARD_DATABASE_POOLER, ['none', 'transaction'] as const, 'none', 'SWITCHBOARD_DATABASE_POOLER');
  if (pooler === 'transaction' && (!env.DATABASE_URL || !env.SWITCHBOARD_DIRECT_DATABASE_URL || env.SWITCHBOARD_DIRECT_DATABASE_URL === env.DATABASE_URL)) {
    throw new SettingError(
      'SWITCHBOARD_DATABASE_POOLER=transaction needs DATABASE_URL at the pooler and SWITCHBOARD_DIRECT_DATABASE_URL at PostgreSQL itself (or a pool_mode=session database of the pooler): the change feed listens and the migrations lock on one session',
    );
  }
  return pooler;
}

/** A DNS name the sites live under (`sites.example.com`), lower-cased; unset stays unset. */
function sitesDomain(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const name = value.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) {
    throw new SettingError(`SWITCHBOARD_SITES_DOMAIN must be a DNS name such as sites.example.com, got "${value}"`);
  }
  return name;
}

function int(value: string | undefined, fallback: number, name: string, min = 0): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new SettingError(min === 0 ? `${name} must be a non-negative integer, got "${value}"` : `${name} must be at least ${min}, got "${value}"`);
  }
  return n;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new SettingError(`${name} takes ${allowed.join(' or ')}, got "${value}"`);
  return value as T;
}

/** Shortest operator token accepted, characters (a generated one has 40). */
export const MIN_CONSOLE_TOKEN_LENGTH = 32;
/**
 * Least estimated entropy of an operator token, bits. A generated token scores about 190. The
 * estimate undercounts short random strings (32 random hex digits, 128 true bits, score 91 to 128),
 * so the bar sits under those and still above a repeated word (`passwordpassword…` scores 88).
 */
export const MIN_CONSOLE_TOKEN_BITS = 90;

/**
 * Entropy of `text` estimated from its own character frequencies (Shannon entropy per character
 * times its length), bits. It cannot see that a string is a dictionary phrase, but it does see
 * repetition and a small alphabet: `aaaa…`, `passwordpassword…` and short strings score low.
 */
export function estimatedEntropyBits(text: string): number {
  const counts = new Map<string, number>();
  const chars = [...text];
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / chars.length) * Math.log2(n / chars.length);
  return perChar * chars.length;
}

/**
 * The operator token of /admin/v1, refused when it is guessable: it opens every account, so a
 * short or repetitive one stops start-up rather than being accepted (unset: start generates one).
 */
function operatorToken(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const length = [...value].length;
  if (length < MIN_CONSOLE_TOKEN_LENGTH || estimatedEntropyBits(value) < MIN_CONSOLE_TOKEN_BITS) {
    throw new SettingError(
      `SWITCHBOARD_ADMIN_TOKEN is too weak (${length} characters): use at least ${MIN_CONSOLE_TOKEN_LENGTH} random characters, ` +
        'such as the token `switchboard start` prints when it is unset, or `openssl rand -base64 32`',
    );
  }
  return value;
}

/**
 * The key that encrypts secrets at rest: 32 bytes in base64 (standard or URL-safe, padding
 * optional). Checked here, so a wrong one stops start-up in one line before any database starts;
 * the key itself is never echoed.
 */
function encryptionKey(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed) || Buffer.from(trimmed, 'base64').length !== 32) {
    throw new SettingError(
      `SWITCHBOARD_ENCRYPTION_KEY must be 32 bytes in base64 (44 characters; got ${[...value].length}), such as \`openssl rand -base64 32\` prints`,
    );
  }
  return trimmed;
}

/**
 * SMTP_URL: an smtp:// or smtps:// URL with a host. A bad one stops start-up in one line that
 * never echoes the value (it may carry the SMTP password).
 */
function smtpUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    /* reported below */
  }
  const example = 'such as smtp://user:password@mail.example.com:587 or smtps://user:password@mail.example.com';
  if (!url) throw new SettingError(`SMTP_URL is not a URL (${example}); the value is not shown because it may hold the password`);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new SettingError(`SMTP_URL must start with smtp:// or smtps:// (${example}), got ${JSON.stringify(url.protocol)}`);
  if (!url.hostname) throw new SettingError(`SMTP_URL names no host (${example})`);
  return value.trim();
}

/** SWITCHBOARD_EMAIL_FROM: a bare address (the display name is the platform's or the brand's). */
function emailFrom(value: string | undefined, publicUrl: string): string {
  if (!value) {
    const host = new URL(publicUrl).hostname;
    return `no-reply@${host && !host.includes(':') && !host.startsWith('[') ? host.toLowerCase() : 'localhost'}`;
  }
  const address = value.trim().toLowerCase();
  const problem = emailAddressProblem(address);
  if (problem) throw new SettingError(`SWITCHBOARD_EMAIL_FROM must be a bare email address such as billing@example.com (${problem}), got ${JSON.stringify(value)}`);
  return address;
}

/** SWITCHBOARD_PLATFORM_NAME: one line of 1 to 100 characters. */
function platformName(value: string | undefined): string {
  if (value === undefined || value === '') return 'Switchboard';
  const name = value.trim();
  if (!name || hasControlCharacters(name) || [...name].length > 100) {
    throw new SettingError(`SWITCHBOARD_PLATFORM_NAME must be one line of 1 to 100 characters without control characters, got ${JSON.stringify(value)}`);
  }
  return name;
}

/**
 * The media server's port and advertised URL of this process. Diallers run as several instances of
 * one pm2 app with one environment, so one port in it would be bound by all of them (the kernel
 * then splits the carrier's streams between them). pm2 numbers an app's instances in
 * NODE_APP_INSTANCE (0, 1, …): instance n listens on SWITCHBOARD_MEDIA_PORT + n, and `{port}` /
 * `{instance}` in SWITCHBOARD_MEDIA_URL are replaced by that port and n. Without pm2 (no
 * NODE_APP_INSTANCE) the instance is 0: the settings are taken as they are. A fixed URL (no
 * placeholder) for an instance past the first is refused: every instance would advertise the first
 * one's address. With SWITCHBOARD_MEDIA_PORT unset (0) each process takes a free port, and a URL
 * derived from SWITCHBOARD_PUBLIC_URL's host names it (app/calls.ts).
 */
export function mediaSettings(env: NodeJS.ProcessEnv, opts: { dialler: boolean } = { dialler: true }): { mediaPort: number; mediaUrl: string | undefined; instance: number } {
  const instance = int(env.NODE_APP_INSTANCE, 0, 'NODE_APP_INSTANCE');
  const base = int(env.SWITCHBOARD_MEDIA_PORT, 0, 'SWITCHBOARD_MEDIA_PORT');
  const mediaPort = base > 0 ? base + instance : 0;
  if (mediaPort > 65_535) throw new SettingError(`SWITCHBOARD_MEDIA_PORT + NODE_APP_INSTANCE is past 65535 (${base} + ${instance})`);
  const template = env.SWITCHBOARD_MEDIA_URL || undefined;
  if (!template) return { mediaPort, mediaUrl: undefined, instance };
  const placeholders = template.includes('{port}') || template.includes('{instance}');
  if (template.includes('{port}') && mediaPort === 0) {
    throw new SettingError('SWITCHBOARD_MEDIA_URL has {port}, which needs SWITCHBOARD_MEDIA_PORT: the port a carrier is told must be known before it is bound');
  }
  // Only a dialler serves media: an api instance given the same environment is not refused.
  if (!placeholders && instance > 0 && opts.dialler) {
    throw new SettingError(
      `SWITCHBOARD_MEDIA_URL names one address for every instance, and this is instance ${instance} (NODE_APP_INSTANCE): put {port} or {instance} in it (wss://media.example.com:{port}/media)`,
    );
  }
  const mediaUrl = template.replaceAll('{port}', String(mediaPort)).replaceAll('{instance}', String(instance));
  try {
    new URL(mediaUrl);
  } catch {
    throw new SettingError(`SWITCHBOARD_MEDIA_URL is not a URL: "${mediaUrl}"`);
  }
  return { mediaPort, mediaUrl, instance };
}

/** Reads the configuration from `env` (process.env by default). Throws on a malformed value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 8080, 'PORT');
  const publicUrl = (env.SWITCHBOARD_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new SettingError(`SWITCHBOARD_PUBLIC_URL is not a URL: "${publicUrl}"`);
  }
  const media = mediaSettings(env, { dialler: roles(env.SWITCHBOARD_ROLES).has('dialler') });
  return {
    port,
    host: env.HOST || '0.0.0.0',
    publicUrl,
    databaseUrl: databaseUrl(env.DATABASE_URL),
    directDatabaseUrl: env.SWITCHBOARD_DIRECT_DATABASE_URL ? databaseUrl(env.SWITCHBOARD_DIRECT_DATABASE_URL, 'SWITCHBOARD_DIRECT_DATABASE_URL') : databaseUrl(env.DATABASE_URL),
    databasePooler: databasePooler(env),
    dataDir: path.resolve(env.SWITCHBOARD_DATA_DIR || '.switchboard'),
    adminToken: operatorToken(env.SWITCHBOARD_ADMIN_TOKEN),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.SWITCHBOARD_TRUST_PROXY === '1',
    testClock: env.SWITCHBOARD_TEST_CLOCK === '1',
    actorIdleMs: int(env.SWITCHBOARD_ACTOR_IDLE_MS, 60_000, 'SWITCHBOARD_ACTOR_IDLE_MS'),
    jobIntervalMs: int(env.SWITCHBOARD_JOB_INTERVAL_MS, 30_000, 'SWITCHBOARD_JOB_INTERVAL_MS'),
    bodyLimitBytes: 1024 * 1024,
    requestTimeoutMs: int(env.SWITCHBOARD_REQUEST_TIMEOUT_MS, 30_000, 'SWITCHBOARD_REQUEST_TIMEOUT_MS', 1),
    connectionTimeoutMs: int(env.SWITCHBOARD_CONNECTION_TIMEOUT_MS, 120_000, 'SWITCHBOARD_CONNECTION_TIMEOUT_MS', 1),
    authFailuresPerMinute: int(env.SWITCHBOARD_AUTH_FAILURES_PER_MINUTE, 20, 'SWITCHBOARD_AUTH_FAILURES_PER_MINUTE', 1),
    twilio:
      env.TWILIO_ACCOUNT_SID && env.TWILIO_AUTH_TOKEN
        ? { accountSid: env.TWILIO_ACCOUNT_SID, authToken: env.TWILIO_AUTH_TOKEN, apiBaseUrl: env.TWILIO_API_BASE_URL || undefined }
        : null,
    simulatedLiveCarrier: env.SWITCHBOARD_SIMULATED_LIVE_CARRIER === '1',
    stripe: env.STRIPE_SECRET_KEY
      ? {
          secretKey: env.STRIPE_SECRET_KEY,
          webhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
          publishableKey: env.STRIPE_PUBLISHABLE_KEY || undefined,
          apiBase: env.STRIPE_API_BASE || undefined,
        }
      : null,
    calendars: {
      google:
        env.GOOGLE_CLIENT_ID && env.GOOGLE_CLIENT_SECRET
          ? {
              clientId: env.GOOGLE_CLIENT_ID,
              clientSecret: env.GOOGLE_CLIENT_SECRET,
              authUrl: env.GOOGLE_OAUTH_URL || 'https://accounts.google.com/o/oauth2/v2/auth',
              tokenUrl: env.GOOGLE_TOKEN_URL || 'https://oauth2.googleapis.com/token',
              apiUrl: (env.GOOGLE_CALENDAR_API_URL || 'https://www.googleapis.com').replace(/\/+$/, ''),
            }
          : null,
      microsoft:
        env.MICROSOFT_CLIENT_ID && env.MICROSOFT_CLIENT_SECRET
          ? {
              clientId: env.MICROSOFT_CLIENT_ID,
              clientSecret: env.MICROSOFT_CLIENT_SECRET,
              tenant: env.MICROSOFT_TENANT || 'common',
              loginUrl: (env.MICROSOFT_LOGIN_URL || 'https://login.microsoftonline.com').replace(/\/+$/, ''),
              graphUrl: (env.MICROSOFT_GRAPH_URL || 'https://graph.microsoft.com').replace(/\/+$/, ''),
            }
          : null,
    },
    openai: env.OPENAI_API_KEY
      ? {
          apiKey: env.OPENAI_API_KEY,
          baseUrl: env.OPENAI_BASE_URL || undefined,
          realtimeUrl: env.OPENAI_REALTIME_URL || undefined,
          realtimeModel: env.OPENAI_REALTIME_MODEL || 'gpt-realtime',
          chatModel: env.OPENAI_CHAT_MODEL || 'gpt-4.1-mini',
        }
      : null,
    mediaPort: media.mediaPort,
    mediaUrl: media.mediaUrl,
    maxCallsPerProcess: int(env.SWITCHBOARD_MAX_CALLS, 200, 'SWITCHBOARD_MAX_CALLS'),
    rateLimitStore: oneOf(env.SWITCHBOARD_RATE_LIMIT_STORE, ['memory', 'postgres'] as const, 'memory', 'SWITCHBOARD_RATE_LIMIT_STORE'),
    dbPoolSize: int(env.SWITCHBOARD_DB_POOL_SIZE, 20, 'SWITCHBOARD_DB_POOL_SIZE', 1),
    diallerPollMs: int(env.SWITCHBOARD_DIALLER_POLL_MS, 1_000, 'SWITCHBOARD_DIALLER_POLL_MS'),
    senderPollMs: int(env.SWITCHBOARD_SENDER_POLL_MS, 1_000, 'SWITCHBOARD_SENDER_POLL_MS'),
    keeperPollMs: int(env.SWITCHBOARD_KEEPER_POLL_MS, 2_000, 'SWITCHBOARD_KEEPER_POLL_MS', 1),
    drainMs: int(env.SWITCHBOARD_DRAIN_MS, 20_000, 'SWITCHBOARD_DRAIN_MS', 0),
    simulatedTalkMs: int(env.SWITCHBOARD_SIMULATED_TALK_MS, 1_000, 'SWITCHBOARD_SIMULATED_TALK_MS'),
    simulatedRingMs: int(env.SWITCHBOARD_SIMULATED_RING_MS, 80, 'SWITCHBOARD_SIMULATED_RING_MS'),
    allowPrivateWebhooks: env.SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS === '1',
    encryptionKey: encryptionKey(env.SWITCHBOARD_ENCRYPTION_KEY),
    roles: roles(env.SWITCHBOARD_ROLES),
    sitesDomain: sitesDomain(env.SWITCHBOARD_SITES_DOMAIN),
    dnsServers: env.SWITCHBOARD_DNS_SERVERS ? env.SWITCHBOARD_DNS_SERVERS.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
    builderPollMs: int(env.SWITCHBOARD_BUILDER_POLL_MS, 2_000, 'SWITCHBOARD_BUILDER_POLL_MS', 10),
    email: { smtpUrl: smtpUrl(env.SMTP_URL), from: emailFrom(env.SWITCHBOARD_EMAIL_FROM, publicUrl), platformName: platformName(env.SWITCHBOARD_PLATFORM_NAME) },
    metrics: metricsSettings(env, port),
  };
}

/** The metrics port's settings; null (off) without SWITCHBOARD_METRICS_PORT. Never the API's port. */
function metricsSettings(env: NodeJS.ProcessEnv, apiPort: number): Config['metrics'] {
  if (env.SWITCHBOARD_METRICS_PORT === undefined || env.SWITCHBOARD_METRICS_PORT === '') return null;
  const port = int(env.SWITCHBOARD_METRICS_PORT, 0, 'SWITCHBOARD_METRICS_PORT');
  const instance = int(env.NODE_APP_INSTANCE, 0, 'NODE_APP_INSTANCE');
  const workers = int(env.SWITCHBOARD_METRICS_WORKERS, 1, 'SWITCHBOARD_METRICS_WORKERS', 1);
  if (port !== 0 && port + instance > 65_535) throw new SettingError(`SWITCHBOARD_METRICS_PORT ${port} plus instance ${instance} is past 65535`);
  if (port !== 0 && (port + instance === apiPort || (apiPort >= port && apiPort < port + workers))) {
    throw new SettingError(`SWITCHBOARD_METRICS_PORT must not take the API's port ${apiPort}: metrics are served on a port of their own`);
  }
  return { port, host: env.SWITCHBOARD_METRICS_HOST || '127.0.0.1', instance, workers };
}

/**
 * The carrier live mode uses: Twilio when configured, else the simulated one where a development
 * or test set-up asked for it, else none (live numbers and calls are refused, and readiness says
 * `carrier_not_configured`).
 */
export function liveCarrierKind(config: Pick<Config, 'twilio' | 'simulatedLiveCarrier'>): 'twilio' | 'simulated' | null {
  return config.twilio ? 'twilio' : config.simulatedLiveCarrier ? 'simulated' : null;
}
