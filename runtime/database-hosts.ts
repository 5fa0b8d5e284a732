import type { Logger } from './logger.ts';
import pg from 'pg';

/**
 * A DATABASE_URL listing several hosts, as libpq takes it
 * (`postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write`), for node-postgres,
 * which takes one host per connection (pg-connection-string parses with `new URL`, and a second
 * host makes it throw `Invalid URL`). docs/decisions.md, "Failover: a DATABASE_URL listing both hosts".
 *
 * `parseDatabaseUrl` splits the list (a pure function); `DatabaseHosts` keeps, per URL and for the
 * whole process, the host believed primary; its `Client` (a pg.Client subclass, given to pg.Pool
 * as its `Client` option and used alone by the change feed) connects there, checks that the
 * session accepts writes, and when the host refuses, cannot be reached or is read-only, moves the
 * belief to the next host and fails that one connection: the caller answers 503 with Retry-After
 * (or retries), and the next connection tries the next host.
 */

/** What a session must be (libpq's target_session_attrs); the others (read-only, standby, prefer-standby) are of no use to a service that writes everywhere. */
export type TargetSessionAttrs = 'read-write' | 'primary' | 'any';
const TARGETS: readonly TargetSessionAttrs[] = ['read-write', 'primary', 'any'];

export interface DatabaseHost {
  /** As written in the URL without brackets and percent-decoded: `db-a.internal`, `::1`, `/var/run/postgresql`. */
  host: string;
  port: number;
}

export interface DatabaseTarget {
  /** Every host of the list, in its order; one for a single-host URL. */
  hosts: DatabaseHost[];
  /** One single-host connection string per host, as pg takes it: the same credentials, database and query options, without target_session_attrs. */
  urls: string[];
  /** read-write unless the URL says otherwise when it lists several hosts; any (libpq's default) for one host. */
  targetSessionAttrs: TargetSessionAttrs;
}

/** A DATABASE_URL that cannot be used, said in one line (runtime/config.ts turns it into a SettingError). */
export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

const DEFAULT_PORT = 5432;

const UNENCODED_PASSWORD = 'a password holding /, ? or # goes percent-encoded: %2F, %3F, %23';

/**
 * Splits a connection URL's host list. Only `postgres://` and `postgresql://` URLs can list hosts;
 * anything else (a socket path, `socket:` URLs) is handed to pg as it is, as one host. Missing
 * ports are 5432, IPv6 addresses go in brackets (`[::1]:5432`), credentials and every query option
 * but target_session_attrs are kept as written (percent-encoded) in each host's URL. Never echoes
 * the URL back (it holds a password).
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!m) return { hosts: [], urls: [url], targetSessionAttrs: 'any' };
  const [, scheme, authority, rest] = m;
  // The last '@' ends the credentials (as URL parsers read it): a password may hold '@' or ','.
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  // An '@' after the authority: a password holding '/', '?' or '#' as it is, cut short there. Said
  // without echoing any of it (the port it would otherwise be read as is a piece of the password).
  if (at === -1 && /^[^?]*@/s.test(rest)) throw new DatabaseUrlError(UNENCODED_PASSWORD);
  const queryStart = rest.indexOf('?');
  const fragmentStart = rest.indexOf('#');
  const path = rest.slice(0, queryStart === -1 ? (fragmentStart === -1 ? rest.length : fragmentStart) : queryStart);
  const query = queryStart === -1 ? '' : rest.slice(queryStart + 1, fragmentStart > queryStart ? fragmentStart : rest.length);
  const params = new URLSearchParams(query);
  const several = hostList.includes(',');
  const asked = params.get('target_session_attrs');
  if (asked !== null && !(TARGETS as readonly string[]).includes(asked)) {
    // Not echoed: a password holding an unencoded '?' would put part of itself here.
    throw new DatabaseUrlError('target_session_attrs must be read-write, primary or any (every role writes)');
  }
  const targetSessionAttrs = (asked as TargetSessionAttrs | null) ?? (several ? 'read-write' : 'any');
  // Without target_session_attrs the query is kept exactly as written (pg reads sslmode, options, …).
  const kept = asked === null ? query : query.split('&').filter((pair) => pair !== '' && decodeParam(pair.split('=')[0]) !== 'target_session_attrs').join('&');
  const tail = `${path}${kept ? `?${kept}` : ''}`;
  // No host at all (`postgres:///db`): pg's defaults (PGHOST, localhost) decide, as before.
  if (hostList === '') return { hosts: [], urls: [`${scheme}${userinfo}${tail}`], targetSessionAttrs };
  if (several) {
    for (const name of ['host', 'hostaddr', 'port']) {
      if (params.has(name)) throw new DatabaseUrlError(`a DATABASE_URL listing several hosts takes no ${name}= option: give each host and port in the list`);
    }
  }
  const entries = hostList.split(',');
  const hosts = entries.map((entry, i) => hostOf(entry, i + 1, several));
  // One host: its URL as written (a missing port stays pg's to choose: PGPORT or 5432).
  const urls = several ? entries.map((entry, i) => `${scheme}${userinfo}${hasPort(entry) ? entry : `${entry.replace(/:$/, '')}:${hosts[i].port}`}${tail}`) : [`${scheme}${userinfo}${hostList}${tail}`];
  return { hosts, urls, targetSessionAttrs };
}

function decodeParam(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function hasPort(entry: string): boolean {
  return /\]:\d+$/.test(entry) || (!entry.startsWith('[') && /:\d+$/.test(entry));
}

/** One entry of the list: `name`, `name:port`, `[v6]`, `[v6]:port`. */
function hostOf(entry: string, n: number, several: boolean): DatabaseHost {
  const where = several ? `host ${n} of the list` : 'the host';
  if (entry === '') throw new DatabaseUrlError(`${where} is empty (two commas, or one at an end)`);
  let host: string;
  let port: string | undefined;
  if (entry.startsWith('[')) {
    const v6 = /^\[([0-9a-f:.]+(?:%25[\w.-]+)?)\](?::(.*))?$/i.exec(entry);
    if (!v6 || !v6[1].includes(':')) throw new DatabaseUrlError(`${where} is not an IPv6 address in brackets such as [::1]:5432`);
    [, host, port] = v6;
  } else {
    const colons = entry.split(':').length - 1;
    if (colons > 1) throw new DatabaseUrlError(`${where} has several colons: an IPv6 address goes in brackets, as [::1]:5432`);
    [host, port] = entry.split(':') as [string, string | undefined];
    if (host === '') throw new DatabaseUrlError(`${where} has a port but no host`);
  }
  if (port !== undefined && port !== '' && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    // Not echoed: what stands there may be a piece of a password (UNENCODED_PASSWORD).
    throw new DatabaseUrlError(`${where} has a port that is not a number from 1 to 65535 (${UNENCODED_PASSWORD})`);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(host);
  } catch {
    throw new DatabaseUrlError(`${where} has a broken percent-encoding`);
  }
  return { host: decoded, port: port ? Number(port) : DEFAULT_PORT };
}

/** libpq's words when a host is not what target_session_attrs asks: the session is read-only, or the server a standby. */
export class WrongSessionError extends Error {
  override name = 'WrongSessionError';
  /** SQLSTATE 25006 read_only_sql_transaction: what a write there would get; runtime/database-errors.ts counts it as the database being away (503, Retry-After). */
  readonly code = '25006';
}

/** Why the host believed primary was left. */
export type HostRefusal = 'unreachable' | 'read_only' | 'check_failed' | 'write_refused';
/** The belief moved from one host to the next. */
export interface HostMove {
  from: string;
  to: string;
  reason: HostRefusal;
}

type ConnectCallback = (err: Error | null, client?: pg.Client) => void;

/**
 * The host list of one DATABASE_URL and the host believed primary, shared by every pool and the
 * change feed of the process (`DatabaseHosts.of(url)`), so that what one connection learns the
 * next one of any of them uses.
 */
export class DatabaseHosts {
  private static readonly known = new Map<string, DatabaseHosts>();

  /** The one DatabaseHosts of `url` in this process. Throws DatabaseUrlError for a list that cannot be used. */
  static of(url: string): DatabaseHosts {
    let hosts = DatabaseHosts.known.get(url);
    if (!hosts) {
      hosts = new DatabaseHosts(parseDatabaseUrl(url));
      DatabaseHosts.known.set(url, hosts);
    }
    return hosts;
  }

  /** Index of the host the next connection goes to. */
  private current = 0;
  private readonly moveListeners = new Set<(move: HostMove) => void>();
  /** The pg.Client subclass connecting to the believed primary; give it to pg.Pool as `Client`. */
  readonly Client: new (config?: pg.ClientConfig) => pg.Client;

  constructor(readonly target: DatabaseTarget) {
    this.Client = hostFollowingClient(this);
  }

  /** The host the next connection goes to, as `host:port` (`[::1]:5432`). */
  get currentHost(): string {
    const h = this.target.hosts[this.current];
    return h ? (h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`) : '(pg default)';
  }

  /** The index and connection string the next connection uses. */
  pick(): { index: number; url: string } {
    return { index: this.current, url: this.target.urls[this.current] };
  }

  /**
   * Host `index` refused a connection, could not be reached, is read-only or refused a write: the
   * next connection tries the one after it. Only a failure of the host still believed moves the
   * belief: a burst of connections failing on the old host moves it once, not once each.
   */
  refused(index: number, reason: HostRefusal = 'unreachable'): void {
    if (index !== this.current || this.target.urls.length < 2) return;
    const from = this.currentHost;
    this.current = (index + 1) % this.target.urls.length;
    const move: HostMove = { from, to: this.currentHost, reason };
    for (const listener of this.moveListeners) listener(move);
  }

  /**
   * Tell `listener` each time the belief moves (the service logs it: an operator sees a failover
   * happen, and from which host to which). Returns the unsubscribe.
   */
  onMove(listener: (move: HostMove) => void): () => void {
    this.moveListeners.add(listener);
    return () => void this.moveListeners.delete(listener);
  }
}

/**
 * How a connected session is checked (libpq's PQconnectPoll, CONNECTION_CHECK_TARGET, since
 * PostgreSQL 14; porsager/postgres's `tryNext`/`fetchState` the same): a server from 14 on reports
 * `in_hot_standby` and `default_transaction_read_only` in its start-up ParameterStatus messages,
 * so no round trip is needed; an older one is asked (`SHOW transaction_read_only`, `SELECT
 * pg_is_in_recovery()`).
 */
async function sessionRefusal(client: pg.Client, reported: Map<string, string>, wanted: TargetSessionAttrs): Promise<string | null> {
  if (wanted === 'any') return null;
  if (wanted === 'read-write') {
    let readOnly: boolean;
    if (reported.has('in_hot_standby') && reported.has('default_transaction_read_only')) {
      readOnly = reported.get('in_hot_standby') === 'on' || reported.get('default_transaction_read_only') === 'on';
    } else {
      readOnly = (await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only')).rows[0]?.transaction_read_only === 'on';
    }
    return readOnly ? 'the session is read-only' : null;
  }
  const standby = reported.has('in_hot_standby')
    ? reported.get('in_hot_standby') === 'on'
    : (await client.query<{ standby: boolean }>('SELECT pg_catalog.pg_is_in_recovery() AS standby')).rows[0]?.standby === true;
  return standby ? 'the server is in hot standby mode' : null;
}

function hostFollowingClient(hosts: DatabaseHosts) {
  return class HostFollowingClient extends pg.Client {
    /** Which host of the list this client was made for. */
    readonly hostIndex: number;
    private readonly reported = new Map<string, string>();
    /** An error the session got after its start-up but before `connect` handed it over. */
    private lostBeforeHandover: Error | undefined;
    private handedOver = false;

    constructor(config: pg.ClientConfig = {}) {
      const { index, url } = hosts.pick();
      super({ ...config, connectionString: url });
      this.hostIndex = index;
      // pg resolves `connect` on ReadyForQuery, but its owner (the pool) listens for 'error' only
      // a few microtasks later; a server shutting down sends ReadyForQuery and its FATAL 57P01 in
      // one packet, so the FATAL was emitted with no listener and crashed the process. Kept until
      // the hand-over, where it fails the connect as a refused connection would; after it this
      // listener does nothing (the owner's own listeners say what an error means).
      this.on('error', (err: Error) => {
        if (!this.handedOver) this.lostBeforeHandover ??= err;
      });
      const connection = (this as unknown as { connection: NodeJS.EventEmitter }).connection;
      connection.on('parameterStatus', (msg: { parameterName: string; parameterValue: string }) => this.reported.set(msg.parameterName, msg.parameterValue));
      // A write refused as read-only (SQLSTATE 25006) on an established session: the host was
      // demoted or fenced; new connections go to the next host (the pool drops this one:
      // db/pool.ts releases a client whose transaction failed so with the error).
      connection.on('errorMessage', (msg: { code?: string }) => {
        if (msg.code === '25006') hosts.refused(this.hostIndex, 'write_refused');
      });
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const done = this.connectAndCheck();
      if (!callback) return done;
      done.then(
        (client) => callback(null, client),
        (err: Error) => callback(err),
      );
    }

    private async connectAndCheck(): Promise<pg.Client> {
      try {
        await super.connect();
      } catch (err) {
        hosts.refused(this.hostIndex);
        throw err;
      }
      let refusal: string | null;
      try {
        refusal = await sessionRefusal(this, this.reported, hosts.target.targetSessionAttrs);
      } catch (err) {
        hosts.refused(this.hostIndex, 'check_failed');
        await this.end().catch(() => {});
        throw err;
      }
      if (this.lostBeforeHandover) {
        hosts.refused(this.hostIndex);
        await this.end().catch(() => {});
        throw this.lostBeforeHandover;
      }
      if (refusal) {
        hosts.refused(this.hostIndex, 'read_only');
        await this.end().catch(() => {});
        throw new WrongSessionError(
          `${this.host}:${this.port} does not take writes (${refusal}; target_session_attrs=${hosts.target.targetSessionAttrs}): the next connection tries ${hosts.currentHost}`,
        );
      }
      this.handedOver = true;
      return this;
    }
  };
}

/**
 * Logs at warn, once per move, each time this process stops believing a host of `url`'s list is
 * the primary (`database_host_moved`: from, to, why). Hosts only, never the password. Returns the
 * unsubscribe. A single-host URL never moves, so never logs.
 */
export function logHostMoves(url: string, log: Pick<Logger, 'warn'>): () => void {
  return DatabaseHosts.of(url).onMove((move) =>
    log.warn({ event: 'database_host_moved', from: move.from, to: move.to, reason: move.reason }, 'the database host believed primary moved; new connections go to the next host'),
  );
}
