/**
 * A fake Microsoft identity platform and Microsoft Graph (v1.0 calendar endpoints) that speaks
 * their public protocol, for tests of calendars/microsoft and the calendar page's OAuth flow: a
 * real HTTP server (port 0) standing in for login.microsoftonline.com and graph.microsoft.com,
 * following:
 *
 * - Authorization code flow (v2.0 endpoints)
 *   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow
 *   `GET /{tenant}/oauth2/v2.0/authorize` (client_id, response_type=code, redirect_uri,
 *   response_mode=query, scope, state) redirects back with `code` and `state` (or
 *   `error=access_denied&error_description=…`); `POST /{tenant}/oauth2/v2.0/token` (form, with
 *   client_id, client_secret, scope) for `authorization_code` and `refresh_token` answers
 *   `{token_type: "Bearer", scope, expires_in, ext_expires_in, access_token, refresh_token}` (a
 *   refresh rotates the refresh token). Errors as documented: 400 `{error: "invalid_grant",
 *   error_description: "AADSTS…", error_codes, timestamp, trace_id, correlation_id}` (a used code
 *   AADSTS54005, a revoked grant AADSTS50173), 401 `invalid_client` (AADSTS7000215).
 * - Graph https://learn.microsoft.com/en-us/graph/api/resources/event with Bearer tokens (401
 *   `InvalidAuthenticationToken` otherwise), error bodies `{error: {code, message, innerError}}`
 *   (https://learn.microsoft.com/en-us/graph/errors): `GET /v1.0/me` (user),
 *   `GET /v1.0/me/calendarView` (startDateTime and endDateTime required, else 400
 *   `ErrorInvalidParameters`; `$top` pages with `@odata.nextLink`), `POST /v1.0/me/events` (201;
 *   `transactionId` keeps a retried POST from creating the event twice: the fake answers the event
 *   already created), `DELETE /v1.0/me/events/{id}` (204; 404 `ErrorItemNotFound`),
 *   `GET /v1.0/me/calendarView/delta` (https://learn.microsoft.com/en-us/graph/delta-query-events:
 *   a window is required on the first request; pages of `Prefer: odata.maxpagesize` with
 *   `@odata.nextLink` ($skiptoken), the last with `@odata.deltaLink` ($deltatoken); deleted events
 *   as `{id, "@removed": {reason: "deleted"}}`), and a delta token no longer known is 410 Gone
 *   `syncStateNotFound` (https://learn.microsoft.com/en-us/graph/delta-query-overview,
 *   "Synchronization reset"). Times are `yyyy-MM-ddTHH:mm:ss.0000000` in UTC.
 * - Throttling https://learn.microsoft.com/en-us/graph/throttling : 429 `TooManyRequests` with
 *   Retry-After; 503 `ServiceUnavailable`.
 *
 * Controls: users, another client's edits (add, move, delete), revoking a user's grant, expiring
 * access or delta tokens, failing the next requests, a request log.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGraphEvent {
  id: string;
  changeKey: string;
  subject: string;
  body: { contentType: string; content: string };
  start: { dateTime: string; timeZone: string };
  end: { dateTime: string; timeZone: string };
  showAs: string;
  isCancelled: boolean;
  transactionId: string | null;
  deleted: boolean;
  seq: number;
}

export interface FakeGraphRequest {
  method: string;
  path: string;
  status: number;
  user: string | null;
}

export interface FakeMicrosoft {
  url: string;
  clientId: string;
  clientSecret: string;
  tenant: string;
  env: Record<string, string>;
  /** runtime/config.ts `calendars.microsoft`. */
  settings: { clientId: string; clientSecret: string; tenant: string; loginUrl: string; graphUrl: string };
  addUser(mail: string): void;
  /** Who consents at the next authorization (default: the first user); `deny` answers access_denied. */
  consentAs(mail: string | 'deny'): void;
  /** Tokens for a user at once, as a finished consent would. */
  grant(mail: string, opts?: { expiresInS?: number }): { accessToken: string; refreshToken: string; expiresAt: string };
  events(mail: string): FakeGraphEvent[];
  insertEvent(mail: string, e: { start: Date; end: Date; subject?: string; free?: boolean }): string;
  moveEvent(mail: string, id: string, start: Date, end: Date): void;
  deleteEvent(mail: string, id: string): void;
  /** The user revokes the app's consent: refresh → invalid_grant (AADSTS50173), access tokens → 401. */
  revoke(mail: string): void;
  expireAccessTokens(): void;
  expireDeltaTokens(): void;
  /** The user's next `times` Graph requests fail with `status` (429 TooManyRequests, 503 ServiceUnavailable…). */
  failNext(mail: string, status: number, times?: number): void;
  requests: FakeGraphRequest[];
  /** Refresh grants answered for a user. */
  refreshes(mail: string): number;
  close(): Promise<void>;
}

const graphError = (code: string, message: string) => ({
  error: { code, message, innerError: { date: new Date().toISOString().slice(0, 19), 'request-id': crypto.randomUUID(), 'client-request-id': crypto.randomUUID() } },
});
const aadError = (error: string, code: number, description: string) => ({
  error,
  error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${crypto.randomUUID()}\r\nCorrelation ID: ${crypto.randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`,
  error_codes: [code],
  timestamp: new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z',
  trace_id: crypto.randomUUID(),
  correlation_id: crypto.randomUUID(),
});
/** Graph's dateTime: no zone, seven fractional digits. */
const graphTime = (d: Date) => `${d.toISOString().slice(0, 19)}.0000000`;
const parseGraphTime = (t: { dateTime: string; timeZone?: string }) => Date.parse(/Z$/.test(t.dateTime) ? t.dateTime : `${t.dateTime}Z`);

export async function startFakeMicrosoft(opts: { tenant?: string; maxPageSize?: number } = {}): Promise<FakeMicrosoft> {
  const clientId = '00000000-0000-0000-0000-00000000c0de';
  const clientSecret = 'fake~microsoft~secret';
  const tenant = opts.tenant ?? 'common';
  const users = new Map<string, Map<string, FakeGraphEvent>>();
  const codes = new Map<string, { mail: string; redirectUri: string }>();
  const refreshTokens = new Map<string, string>();
  const accessTokens = new Map<string, { mail: string; expiresAt: number }>();
  const failures = new Map<string, { status: number; left: number }>();
  const requests: FakeGraphRequest[] = [];
  let consent: string | null = null;
  let seq = 1;
  let epoch = 1;
  const refreshCounts = new Map<string, number>();

  const random = (prefix: string, n = 24) => prefix + crypto.randomBytes(n).toString('base64url');
  const eventsOf = (mail: string) => {
    const m = users.get(mail);
    if (!m) throw new Error(`no fake Microsoft user ${mail}`);
    return m;
  };
  const issue = (mail: string, expiresInS = 3599) => {
    const accessToken = random('eyJ0eXAiOiJKV1Qi.', 48);
    accessTokens.set(accessToken, { mail, expiresAt: Date.now() + expiresInS * 1000 });
    return { accessToken, expiresInS };
  };
  const touch = (e: FakeGraphEvent) => {
    e.seq = ++seq;
    e.changeKey = crypto.createHash('sha256').update(`${e.id}:${e.seq}`).digest('base64').slice(0, 28);
  };
  const add = (mail: string, e: Omit<FakeGraphEvent, 'id' | 'changeKey' | 'seq' | 'deleted'>) => {
    const event: FakeGraphEvent = { ...e, id: random('AAMkAGI2', 30), changeKey: '', seq: 0, deleted: false };
    touch(event);
    eventsOf(mail).set(event.id, event);
    return event;
  };
  const resource = (e: FakeGraphEvent) => ({
    '@odata.etag': `W/"${e.changeKey}"`,
    id: e.id,
    changeKey: e.changeKey,
    subject: e.subject,
    body: e.body,
    start: { dateTime: graphTime(new Date(parseGraphTime(e.start))), timeZone: 'UTC' },
    end: { dateTime: graphTime(new Date(parseGraphTime(e.end))), timeZone: 'UTC' },
    showAs: e.showAs,
    isCancelled: e.isCancelled,
    transactionId: e.transactionId,
  });
  const overlaps = (e: FakeGraphEvent, from: number, to: number) => parseGraphTime(e.start) < to && parseGraphTime(e.end) > from;
  const token = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const untoken = (t: string | null): any => {
    try {
      return t ? JSON.parse(Buffer.from(t, 'base64url').toString('utf8')) : null;
    } catch {
      return null;
    }
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let user: string | null = null;
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      requests.push({ method: req.method ?? '', path: url.pathname, status, user });
      res.writeHead(status, body === undefined ? headers : { 'content-type': 'application/json; odata.metadata=minimal; charset=utf-8', ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const origin = `http://${req.headers.host}`;

    if (req.method === 'GET' && url.pathname === `/${tenant}/oauth2/v2.0/authorize`) {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId) return send(400, aadError('unauthorized_client', 700016, `Application with identifier '${q.get('client_id')}' was not found.`));
      const back = new URL(q.get('redirect_uri') ?? '');
      const who = consent ?? [...users.keys()][0];
      if (who === 'deny' || who === undefined) {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'AADSTS65004: User declined to consent to access the app.');
      } else {
        const code = random('0.AX', 40);
        codes.set(code, { mail: who, redirectUri: q.get('redirect_uri')! });
        back.searchParams.set('code', code);
      }
      const state = q.get('state');
      if (state !== null) back.searchParams.set('state', state);
      return send(302, undefined, { location: back.toString() });
    }

    if (req.method === 'POST' && url.pathname === `/${tenant}/oauth2/v2.0/token`) {
      const f = new URLSearchParams(raw);
      if (f.get('client_id') !== clientId || f.get('client_secret') !== clientSecret) {
        return send(401, aadError('invalid_client', 7000215, 'Invalid client secret provided.'));
      }
      const answer = (mail: string) => {
        const refreshToken = random('0.AXkA', 60);
        refreshTokens.set(refreshToken, mail);
        const { accessToken, expiresInS } = issue(mail);
        return { token_type: 'Bearer', scope: 'Calendars.ReadWrite User.Read', expires_in: expiresInS, ext_expires_in: expiresInS, access_token: accessToken, refresh_token: refreshToken };
      };
      if (f.get('grant_type') === 'authorization_code') {
        const granted = codes.get(f.get('code') ?? '');
        codes.delete(f.get('code') ?? '');
        if (!granted) return send(400, aadError('invalid_grant', 54005, 'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.'));
        if (granted.redirectUri !== f.get('redirect_uri')) return send(400, aadError('invalid_grant', 50148, 'The redirect_uri does not match the one of the authorization request.'));
        return send(200, answer(granted.mail));
      }
      if (f.get('grant_type') === 'refresh_token') {
        const mail = refreshTokens.get(f.get('refresh_token') ?? '');
        if (!mail) return send(400, aadError('invalid_grant', 50173, 'The provided grant has expired due to it being revoked, a fresh auth token is needed.'));
        refreshCounts.set(mail, (refreshCounts.get(mail) ?? 0) + 1);
        return send(200, answer(mail));
      }
      return send(400, aadError('unsupported_grant_type', 70003, 'The app requested an unsupported grant type.'));
    }

    if (!url.pathname.startsWith('/v1.0/')) return send(404, graphError('BadRequest', 'Invalid version.'));
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const access = bearer ? accessTokens.get(bearer) : undefined;
    if (!access || access.expiresAt <= Date.now()) return send(401, graphError('InvalidAuthenticationToken', 'Access token has expired or is not yet valid.'));
    user = access.mail;
    const failure = failures.get(access.mail);
    if (failure && failure.left > 0) {
      failure.left--;
      if (failure.status === 429) return send(429, graphError('TooManyRequests', 'Too many requests.'), { 'retry-after': '1' });
      return send(failure.status, graphError(failure.status === 503 ? 'ServiceUnavailable' : 'generalException', 'The service is unavailable.'));
    }
    const events = eventsOf(access.mail);
    const path = url.pathname.slice('/v1.0'.length).replace(/^\/me\/calendars\/[^/]+\//, '/me/');
    const q = url.searchParams;
    const pageSize = Math.min(Number(/odata\.maxpagesize=(\d+)/.exec(String(req.headers.prefer ?? ''))?.[1] ?? q.get('$top') ?? 10), opts.maxPageSize ?? 1000);

    if (req.method === 'GET' && path === '/me') return send(200, { id: crypto.createHash('md5').update(access.mail).digest('hex'), displayName: access.mail.split('@')[0], mail: access.mail, userPrincipalName: access.mail });

    if (req.method === 'GET' && path === '/me/calendarView') {
      const skip = untoken(q.get('$skiptoken'));
      const from: number = skip?.from ?? Date.parse(q.get('startDateTime') ?? '');
      const to: number = skip?.to ?? Date.parse(q.get('endDateTime') ?? '');
      if (!Number.isFinite(from) || !Number.isFinite(to)) {
        return send(400, graphError('ErrorInvalidParameters', 'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.'));
      }
      const all = [...events.values()].filter((e) => !e.deleted && overlaps(e, from, to)).sort((a, b) => parseGraphTime(a.start) - parseGraphTime(b.start));
      const offset = skip?.offset ?? 0;
      const more = offset + pageSize < all.length;
      return send(200, {
        '@odata.context': `${origin}/v1.0/$metadata#users('${access.mail}')/calendarView`,
        value: all.slice(offset, offset + pageSize).map(resource),
        ...(more ? { '@odata.nextLink': `${origin}/v1.0/me/calendarView?$skiptoken=${token({ from, to, offset: offset + pageSize })}` } : {}),
      });
    }

    if (req.method === 'GET' && path === '/me/calendarView/delta') {
      // A delta or skip token carries the window, the change number it stands at, and its epoch.
      const state = untoken(q.get('$deltatoken') ?? q.get('$skiptoken'));
      if ((q.get('$deltatoken') || q.get('$skiptoken')) && (!state || state.epoch !== epoch)) {
        return send(410, graphError('syncStateNotFound', 'The sync state generation is not found. The delta token is expired and data must be synchronized again.'));
      }
      const from = state?.from ?? Date.parse(q.get('startDateTime') ?? '');
      const to = state?.to ?? Date.parse(q.get('endDateTime') ?? '');
      if (!Number.isFinite(from) || !Number.isFinite(to)) {
        return send(400, graphError('ErrorInvalidParameters', 'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.'));
      }
      const since = state?.since ?? 0;
      const upTo = state?.upTo ?? seq;
      const all = [...events.values()]
        .filter((e) => e.seq > since && e.seq <= upTo && (e.deleted ? since > 0 : overlaps(e, from, to)))
        .sort((a, b) => a.seq - b.seq);
      const offset = state?.offset ?? 0;
      const more = offset + pageSize < all.length;
      const value = all.slice(offset, offset + pageSize).map((e) => (e.deleted ? { '@odata.type': '#microsoft.graph.event', id: e.id, '@removed': { reason: 'deleted' } } : resource(e)));
      const link = more
        ? { '@odata.nextLink': `${origin}/v1.0/me/calendarView/delta?$skiptoken=${token({ epoch, from, to, since, upTo, offset: offset + pageSize })}` }
        : { '@odata.deltaLink': `${origin}/v1.0/me/calendarView/delta?$deltatoken=${token({ epoch, from, to, since: upTo })}` };
      return send(200, { '@odata.context': `${origin}/v1.0/$metadata#Collection(event)`, value, ...link });
    }

    if (req.method === 'POST' && path === '/me/events') {
      const body = JSON.parse(raw || '{}');
      if (!body.start?.dateTime || !body.end?.dateTime) return send(400, graphError('ErrorInvalidRequest', 'Your request can\'t be completed. An event requires a start and an end.'));
      const existing = body.transactionId ? [...events.values()].find((e) => e.transactionId === body.transactionId && !e.deleted) : undefined;
      const event =
        existing ??
        add(access.mail, {
          subject: body.subject ?? '',
          body: body.body ?? { contentType: 'text', content: '' },
          start: body.start,
          end: body.end,
          showAs: body.showAs ?? 'busy',
          isCancelled: false,
          transactionId: body.transactionId ?? null,
        });
      return send(201, { '@odata.context': `${origin}/v1.0/$metadata#users('${access.mail}')/events/$entity`, ...resource(event) });
    }

    const one = /^\/me\/events\/([^/]+)$/.exec(path);
    if (one && req.method === 'DELETE') {
      const e = events.get(decodeURIComponent(one[1]!));
      if (!e || e.deleted) return send(404, graphError('ErrorItemNotFound', 'The specified object was not found in the store.'));
      e.deleted = true;
      touch(e);
      return send(204);
    }
    return send(400, graphError('BadRequest', `Resource not found for the segment '${path.split('/').pop()}'.`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const settings = { clientId, clientSecret, tenant, loginUrl: url, graphUrl: url };
  const find = (mail: string, id: string) => {
    const e = eventsOf(mail).get(id);
    if (!e) throw new Error(`no event ${id}`);
    return e;
  };

  return {
    url,
    clientId,
    clientSecret,
    tenant,
    settings,
    env: { MICROSOFT_CLIENT_ID: clientId, MICROSOFT_CLIENT_SECRET: clientSecret, MICROSOFT_TENANT: tenant, MICROSOFT_LOGIN_URL: url, MICROSOFT_GRAPH_URL: url },
    addUser: (mail) => void users.set(mail, users.get(mail) ?? new Map()),
    consentAs: (who) => void (consent = who),
    grant(mail, o = {}) {
      eventsOf(mail);
      const refreshToken = random('0.AXkA', 60);
      refreshTokens.set(refreshToken, mail);
      const { accessToken, expiresInS } = issue(mail, o.expiresInS);
      return { accessToken, refreshToken, expiresAt: new Date(Date.now() + expiresInS * 1000).toISOString() };
    },
    events: (mail) => [...eventsOf(mail).values()],
    insertEvent(mail, e) {
      return add(mail, {
        subject: e.subject ?? 'Busy',
        body: { contentType: 'text', content: '' },
        start: { dateTime: graphTime(e.start), timeZone: 'UTC' },
        end: { dateTime: graphTime(e.end), timeZone: 'UTC' },
        showAs: e.free ? 'free' : 'busy',
        isCancelled: false,
        transactionId: null,
      }).id;
    },
    moveEvent(mail, id, start, end) {
      const e = find(mail, id);
      e.start = { dateTime: graphTime(start), timeZone: 'UTC' };
      e.end = { dateTime: graphTime(end), timeZone: 'UTC' };
      touch(e);
    },
    deleteEvent(mail, id) {
      const e = find(mail, id);
      e.deleted = true;
      touch(e);
    },
    revoke(mail) {
      for (const [t, who] of refreshTokens) if (who === mail) refreshTokens.delete(t);
      for (const [t, a] of accessTokens) if (a.mail === mail) accessTokens.delete(t);
    },
    expireAccessTokens() {
      for (const a of accessTokens.values()) a.expiresAt = 0;
    },
    expireDeltaTokens() {
      epoch++;
    },
    failNext: (mail, status, times = 1) => void failures.set(mail, { status, left: times }),
    requests,
    refreshes: (mail) => refreshCounts.get(mail) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
