import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import crypto from 'node:crypto';
import pino from 'pino';

export const REQUEST_ID_HEADER = 'request-id';

/**
 * Headers of every response. `nosniff`: a browser never reads a JSON error or a download as HTML.
 * `no-store`: no cache keeps what the service answers, above all the one-time secrets (key
 * secrets, session tokens, onboarding URLs, webhook signing secrets); a route may say otherwise.
 */
export const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' } as const;

/** What the request line of an answered request says (one JSON line, message `request`). */
export interface RequestLine {
  request_id: string;
  account_id: string | null;
  mode: string | null;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
}

/** Writes one request line (message `request`) at its level (`requestLineLevel`). */
export type RequestLineWriter = (line: RequestLine) => void;

const { chindingsSym, streamSym, timeSym } = pino.symbols;

/** pino's numbers of the levels a request line is written at. */
const LEVEL_NUMBER = { info: 30, debug: 20 } as const;

/**
 * The level of a request's line: info, but debug for a `/healthz` answered 200. Every load
 * balancer and supervisor asks `/healthz` every few seconds on every host, so at info those lines
 * would outnumber the API's own; an operator who wants them sets LOG_LEVEL=debug. The probe still
 * counts in `switchboard_http_request_duration_seconds`, and a `/healthz` answered otherwise (a
 * closing process's 503) is logged at info like any other request (docs/api.md, "Health").
 */
export function requestLineLevel(route: string, status: number): keyof typeof LEVEL_NUMBER {
  return status === 200 && route === '/healthz' ? 'debug' : 'info';
}

/**
 * The writer of request lines: the line pino would write through `log` (level, time, the process's
 * bindings, the fields, `msg`), made by hand. A request line holds only ids, the route pattern, a
 * status and a duration, never a header, URL or body: there is nothing to redact, no serializer
 * applies, and pino's walk over each field (redaction above all) was the dearest part of a
 * `/healthz` answer.
 */
export function requestLineWriter(log: FastifyBaseLogger): RequestLineWriter {
  const logger = log as unknown as pino.Logger & Record<symbol, unknown>;
  const text = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));
  return (line) => {
    const level = requestLineLevel(line.route, line.status);
    if (!logger.isLevelEnabled(level)) return;
    (logger[streamSym] as { write(s: string): void }).write(
      `{"level":${LEVEL_NUMBER[level]}${(logger[timeSym] as () => string)()}${logger[chindingsSym] as string},"request_id":${text(line.request_id)},"account_id":${text(line.account_id)},` +
        `"mode":${text(line.mode)},"method":${text(line.method)},"route":${text(line.route)},"status":${line.status},"duration_ms":${line.duration_ms},"msg":"request"}\n`,
    );
  };
}

/**
 * One pino line per request (request id, account, route, status, duration). The route is the
 * pattern (`/onboarding/:token`), never the raw URL, so a token in a path is never logged; no
 * header is logged at all. The line is written by the process's logger with `request_id` in it,
 * not through `request.log` (made only when a request logs something else: `lazyRequestLogger`).
 * `alsoOnResponse` runs in the same onResponse hook, after the line is written.
 */
export function installRequestLog(app: AnyApp, opts: { alsoOnResponse?: (request: FastifyRequest, reply: FastifyReply) => void } = {}): void {
  const alsoOnResponse = opts.alsoOnResponse;
  const writeLine = requestLineWriter(app.log);
  // Hooks that never wait take fastify's callback form: no promise and no microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    reply.headers(SECURITY_HEADERS);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    writeLine(requestLine(request, reply));
    // What else is done once a request is answered (app.ts: its metrics), in the same hook.
    if (alsoOnResponse) alsoOnResponse(request, reply);
    done();
  });
}

/**
 * The line of an answered request. Its duration is fastify's own clock of the request
 * (`reply.elapsedTime`: from the router's match, before every onRequest hook, to the response's
 * end), the one `switchboard_http_request_duration_seconds` observes too; a clock of its own cost
 * a BigInt time stamp in onRequest and another in onResponse per request.
 */
function requestLine(request: FastifyRequest, reply: FastifyReply): RequestLine {
  const durationMs = reply.elapsedTime;
  return {
    request_id: request.id,
    account_id: request.auth?.accountId ?? null,
    mode: request.auth?.mode ?? null,
    method: request.method,
    route: request.routeOptions.url ?? 'unknown',
    status: reply.statusCode,
    duration_ms: Math.round(durationMs * 100) / 100,
  };
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * `request.log` made on first use. fastify's default makes a pino child per request (binding
 * `reqId`), which cost more than the rest of a `/healthz` answer, while most requests never log
 * through it (their request line is written by the process's logger). This stands in for it: the
 * first line at an enabled level, or `child`, makes the real child with the same bindings and
 * options, so every line logged through `request.log` still carries `reqId` as before.
 */
class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: { level?: string },
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  /** Whether a line at `level` is written at all (a route's own level makes the child at once). */
  private enabled(level: LogMethod): boolean {
    return this.made !== undefined || this.options.level !== undefined || (this.parent as FastifyBaseLogger & { isLevelEnabled(l: string): boolean }).isLevelEnabled(level);
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.made ? (this.made as FastifyBaseLogger & { isLevelEnabled(l: string): boolean }).isLevelEnabled(level) : this.enabled(level as LogMethod);
  }

  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private write(level: LogMethod, args: unknown[]): void {
    if (this.enabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}
}

/** fastify's `childLoggerFactory`: `request.log` (and `reply.log`) made on first use (LazyRequestLogger). */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings as Record<string, unknown>, options as { level?: string }) as unknown as FastifyBaseLogger;

/**
 * `req_` + 24 hex characters: the first 24 of a random UUID without its dashes (8-4-4-4 and 4 of
 * the last group), cut out without a regular expression. randomUUID draws from a cached entropy
 * pool: far cheaper per request than randomBytes.
 */
export const genRequestId = () => {
  const u = crypto.randomUUID();
  return `req_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(14, 18)}${u.slice(19, 23)}${u.slice(24, 28)}`;
};
