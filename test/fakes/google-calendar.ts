/**
 * A fake Google (OAuth 2.0 and Calendar API v3) that speaks Google's public protocol, for tests of
 * calendars/google and the calendar page's OAuth flow: a real HTTP server (port 0) standing in for
 * accounts.google.com, oauth2.googleapis.com and www.googleapis.com, following:
 *
 * - OAuth 2.0 for web server applications
 *   https://developers.google.com/identity/protocols/oauth2/web-server
 *   `GET /o/oauth2/v2/auth` (client_id, redirect_uri, response_type=code, scope, state,
 *   access_type=offline, prompt=consent) redirects back with `code`, `state` and `scope` (or
 *   `error=access_denied`); `POST /token` (form) with `grant_type=authorization_code` answers
 *   `{access_token, expires_in, refresh_token, scope, token_type: "Bearer", id_token}` and with
 *   `grant_type=refresh_token` the same without a new refresh token. Errors as Google gives them:
 *   400 `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}` for a
 *   revoked refresh token, 400 `invalid_grant` "Bad Request" for a bad or used code, 401 `invalid_client`.
 * - Calendar API v3 https://developers.google.com/calendar/api/v3/reference with Bearer tokens:
 *   `POST /calendar/v3/freeBusy` (freebusy.query: `calendars.<id>.busy`, or `errors: [{domain,
 *   reason: "notFound"}]`), `POST /calendar/v3/calendars/{id}/events` (events.insert: a client id
 *   must be base32hex, 5–1024 characters; a taken id is 409 `duplicate`), `GET …/events/{eventId}`
 *   (events.get), `DELETE …/events/{eventId}` (events.delete: 204; 410 `deleted` when already
 *   deleted, 404 `notFound`), `GET …/events` (events.list with `pageToken`, `maxResults` (default
 *   250, at most 2500), `showDeleted`, `syncToken`; the last page carries `nextSyncToken`; with a
 *   sync token deleted events come back `status: "cancelled"`).
 * - Incremental sync https://developers.google.com/calendar/api/guides/sync : an expired sync
 *   token is 410 with reason `fullSyncRequired`.
 * - Error bodies https://developers.google.com/calendar/api/guides/errors :
 *   `{"error":{"errors":[{"domain","reason","message"}],"code","message"}}`; 401 `authError`
 *   (invalid or expired access token), 403/429 `rateLimitExceeded`.
 *
 * Controls: users and their calendars, another client's edits (insert, move, delete), revoking a
 * user's grant, expiring access tokens or sync tokens, failing the next requests, a request log.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGoogleEvent {
  id: string;
  etag: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  summary?: string;
  description?: string;
  transparency?: 'opaque' | 'transparent';
  start: { dateTime: string; timeZone?: string };
  end: { dateTime: string; timeZone?: string };
  iCalUID?: string;
  created: string;
  updated: string;
  /** The change number of its last change (what sync tokens compare). */
  seq: number;
}

export interface FakeGoogleRequest {
  method: string;
  path: string;
  status: number;
  /** The account whose access token was used (Calendar API requests). */
  email: string | null;
}

export interface FakeGoogle {
  /** Origin of every endpoint: GOOGLE_OAUTH_URL = `${url}/o/oauth2/v2/auth`, GOOGLE_TOKEN_URL = `${url}/token`, GOOGLE_CALENDAR_API_URL = url. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** The env of a service using this fake (GOOGLE_*). */
  env: Record<string, string>;
  /** The settings of runtime/config.ts `calendars.google`. */
  settings: { clientId: string; clientSecret: string; authUrl: string; tokenUrl: string; apiUrl: string };
  /** Adds a Google account (its primary calendar is its email). */
  addUser(email: string): void;
  /** Who consents at the next authorization (default: the first user); `deny` answers access_denied. */
  consentAs(email: string | 'deny'): void;
  /** Gives tokens for a user at once, as a finished consent would (tests of the adapter without the browser steps). */
  grant(email: string, opts?: { expiresInS?: number }): { accessToken: string; refreshToken: string; expiresAt: string };
  /** The events of a user's calendar, deleted ones included. */
  events(email: string): FakeGoogleEvent[];
  /** Another client adds an event; returns its id. */
  insertEvent(email: string, e: { start: Date; end: Date; summary?: string; transparent?: boolean }): string;
  /** Another client moves an event. */
  moveEvent(email: string, id: string, start: Date, end: Date): void;
  /** Another client deletes an event. */
  deleteEvent(email: string, id: string): void;
  /** The user withdraws access: refresh tokens → invalid_grant, access tokens → 401. */
  revoke(email: string): void;
  /** Every access token given so far stops working (401 authError), as after an hour. */
  expireAccessTokens(): void;
  /** Every sync token given so far is refused with 410 fullSyncRequired. */
  expireSyncTokens(): void;
  /** The user's next `times` Calendar API requests fail with `status` (429/403 rateLimitExceeded, 5xx backendError). */
  failNext(email: string, status: number, times?: number): void;
  requests: FakeGoogleRequest[];
  /** Refresh grants answered for a user. */
  refreshes(email: string): number;
  close(): Promise<void>;
}

const googleError = (code: number, reason: string, message: string, domain = 'global') => ({ error: { errors: [{ domain, reason, message }], code, message } });

export interface FakeGoogleOptions {
  clientId?: string;
  clientSecret?: string;
  /** Most events in one page of events.list (Google's cap is 2500; lower it to see paging). */
  maxPageSize?: number;
}

export async function startFakeGoogle(opts: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const clientId = opts.clientId ?? 'fake-google-client.apps.googleusercontent.com';
  const clientSecret = opts.clientSecret ?? 'fake-google-secret';
  const calendars = new Map<string, Map<string, FakeGoogleEvent>>();
  const codes = new Map<string, { email: string; redirectUri: string }>();
  const refreshTokens = new Map<string, string>(); // token → email
  const accessTokens = new Map<string, { email: string; expiresAt: number }>();
  const requests: FakeGoogleRequest[] = [];
  let seq = 1;
  /** Sync tokens name the epoch they were given in; expireSyncTokens starts a new one. */
  let epoch = 1;
  let consent: string | 'deny' | null = null;
  const failures = new Map<string, { status: number; left: number }>();
  const refreshCounts = new Map<string, number>();

  const random = (prefix: string) => prefix + crypto.randomBytes(18).toString('base64url');
  const calendarOf = (email: string) => {
    const cal = calendars.get(email);
    if (!cal) throw new Error(`no fake Google user ${email}`);
    return cal;
  };
  const issue = (email: string, expiresInS = 3599) => {
    const accessToken = random('ya29.');
    accessTokens.set(accessToken, { email, expiresAt: Date.now() + expiresInS * 1000 });
    return { accessToken, expiresInS };
  };
  const touch = (e: FakeGoogleEvent) => {
    e.seq = ++seq;
    e.etag = `"${3_000_000_000_000_000 + e.seq}"`;
    e.updated = new Date().toISOString();
  };
  const put = (email: string, e: Omit<FakeGoogleEvent, 'etag' | 'seq' | 'created' | 'updated'>) => {
    const now = new Date().toISOString();
    const event: FakeGoogleEvent = { ...e, etag: '', seq: 0, created: now, updated: now };
    touch(event);
    calendarOf(email).set(event.id, event);
    return event;
  };
  const resource = (e: FakeGoogleEvent) => {
    const { seq: _seq, ...rest } = e;
    if (e.status === 'cancelled') return { kind: 'calendar#event', etag: e.etag, id: e.id, status: 'cancelled' };
    return { kind: 'calendar#event', ...rest, htmlLink: `https://www.google.com/calendar/event?eid=${e.id}` };
  };
  const syncToken = (n: number) => `CP${Buffer.from(`${epoch}:${n}`).toString('base64url')}`;
  /** The change number a token was given at; null when malformed or of an expired epoch. */
  const readSyncToken = (t: string): number | null => {
    const m = /^(\d+):(\d+)$/.exec(Buffer.from(t.slice(2), 'base64url').toString('utf8'));
    return t.startsWith('CP') && m && Number(m[1]) === epoch ? Number(m[2]) : null;
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let email: string | null = null;
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      requests.push({ method: req.method ?? '', path: url.pathname, status, email });
      res.writeHead(status, body === undefined ? headers : { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };

    // OAuth consent: the user "signs in and allows", and the browser is sent back.
    if (req.method === 'GET' && url.pathname === '/o/oauth2/v2/auth') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId) return send(400, { error: 'invalid_client' }); // Google shows "Error 401: invalid_client"
      const back = new URL(q.get('redirect_uri') ?? '');
      if (q.get('response_type') !== 'code') return send(400, { error: 'unsupported_response_type' });
      const state = q.get('state');
      if (state !== null) back.searchParams.set('state', state);
      const who = consent ?? [...calendars.keys()][0];
      if (who === 'deny' || who === undefined) back.searchParams.set('error', 'access_denied');
      else {
        const code = random('4/0A');
        codes.set(code, { email: who, redirectUri: q.get('redirect_uri')! });
        back.searchParams.set('code', code);
        back.searchParams.set('scope', q.get('scope') ?? '');
      }
      return send(302, undefined, { location: back.toString() });
    }

    if (req.method === 'POST' && url.pathname === '/token') {
      const f = new URLSearchParams(raw);
      if (f.get('client_id') !== clientId || f.get('client_secret') !== clientSecret) {
        return send(401, { error: 'invalid_client', error_description: 'Unauthorized' });
      }
      if (f.get('grant_type') === 'authorization_code') {
        const granted = codes.get(f.get('code') ?? '');
        codes.delete(f.get('code') ?? '');
        if (!granted || granted.redirectUri !== f.get('redirect_uri')) return send(400, { error: 'invalid_grant', error_description: 'Bad Request' });
        const refreshToken = random('1//0g');
        refreshTokens.set(refreshToken, granted.email);
        const { accessToken, expiresInS } = issue(granted.email);
        const claims = { iss: 'https://accounts.google.com', aud: clientId, sub: granted.email, email: granted.email, email_verified: true };
        const idToken = [{ alg: 'RS256', typ: 'JWT' }, claims].map((p) => Buffer.from(JSON.stringify(p)).toString('base64url')).join('.') + '.c2ln';
        return send(200, { access_token: accessToken, expires_in: expiresInS, refresh_token: refreshToken, scope: '', token_type: 'Bearer', id_token: idToken });
      }
      if (f.get('grant_type') === 'refresh_token') {
        const email = refreshTokens.get(f.get('refresh_token') ?? '');
        if (!email) return send(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
        refreshCounts.set(email, (refreshCounts.get(email) ?? 0) + 1);
        const { accessToken, expiresInS } = issue(email);
        return send(200, { access_token: accessToken, expires_in: expiresInS, scope: 'https://www.googleapis.com/auth/calendar.events', token_type: 'Bearer' });
      }
      return send(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    }

    if (!url.pathname.startsWith('/calendar/v3/')) return send(404, googleError(404, 'notFound', 'Not Found'));
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? accessTokens.get(bearer) : undefined;
    if (!token || token.expiresAt <= Date.now()) {
      return send(401, {
        error: {
          errors: [{ domain: 'global', reason: 'authError', message: 'Invalid Credentials', locationType: 'header', location: 'Authorization' }],
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        },
      });
    }
    email = token.email;
    const failure = failures.get(token.email);
    if (failure && failure.left > 0) {
      failure.left--;
      const { status } = failure;
      if (status === 429 || status === 403) return send(status, googleError(status, 'rateLimitExceeded', 'Rate Limit Exceeded', 'usageLimits'));
      return send(status, googleError(status, 'backendError', 'Backend Error'));
    }
    const body = raw ? JSON.parse(raw) : {};
    // The calendar id: `primary` or the user's own address.
    const calendarFor = (id: string) => (id === 'primary' || id === token.email ? calendarOf(token.email) : undefined);

    if (req.method === 'POST' && url.pathname === '/calendar/v3/freeBusy') {
      const from = Date.parse(body.timeMin);
      const to = Date.parse(body.timeMax);
      if (!Number.isFinite(from) || !Number.isFinite(to)) return send(400, googleError(400, 'badRequest', 'Bad Request'));
      const out: Record<string, unknown> = {};
      for (const { id } of body.items ?? []) {
        const cal = calendarFor(id);
        if (!cal) {
          out[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
          continue;
        }
        const busy = [...cal.values()]
          .filter((e) => e.status !== 'cancelled' && e.transparency !== 'transparent')
          .filter((e) => Date.parse(e.start.dateTime) < to && Date.parse(e.end.dateTime) > from)
          .sort((a, b) => Date.parse(a.start.dateTime) - Date.parse(b.start.dateTime))
          .map((e) => ({ start: new Date(Date.parse(e.start.dateTime)).toISOString(), end: new Date(Date.parse(e.end.dateTime)).toISOString() }));
        out[id] = { busy };
      }
      return send(200, { kind: 'calendar#freeBusy', timeMin: body.timeMin, timeMax: body.timeMax, calendars: out });
    }

    const m = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    const cal = m ? calendarFor(decodeURIComponent(m[1]!)) : undefined;
    if (!m || !cal) return send(404, googleError(404, 'notFound', 'Not Found'));
    const eventId = m[2] ? decodeURIComponent(m[2]) : undefined;

    if (req.method === 'POST' && !eventId) {
      const id: string = body.id ?? crypto.randomBytes(13).toString('hex');
      if (!/^[a-v0-9]{5,1024}$/.test(id)) return send(400, googleError(400, 'invalid', 'Invalid resource id value.'));
      if (cal.has(id)) return send(409, googleError(409, 'duplicate', 'The requested identifier already exists.'));
      if (!body.start?.dateTime || !body.end?.dateTime) return send(400, googleError(400, 'required', 'Missing time zone definition for start time.'));
      const event = put(token.email, {
        id,
        status: body.status ?? 'confirmed',
        summary: body.summary,
        description: body.description,
        transparency: body.transparency,
        start: body.start,
        end: body.end,
        iCalUID: body.iCalUID ?? `${id}@google.com`,
      });
      return send(200, resource(event));
    }
    if (req.method === 'GET' && eventId) {
      const e = cal.get(eventId);
      return e ? send(200, resource(e)) : send(404, googleError(404, 'notFound', 'Not Found'));
    }
    if (req.method === 'DELETE' && eventId) {
      const e = cal.get(eventId);
      if (!e) return send(404, googleError(404, 'notFound', 'Not Found'));
      if (e.status === 'cancelled') return send(410, googleError(410, 'deleted', 'Resource has been deleted'));
      e.status = 'cancelled';
      touch(e);
      return send(204);
    }
    if (req.method === 'GET' && !eventId) {
      const q = url.searchParams;
      const maxResults = Math.min(Number(q.get('maxResults') ?? 250), 2500, opts.maxPageSize ?? 2500);
      const token = q.get('syncToken');
      let since = 0;
      if (token) {
        const n = readSyncToken(token);
        if (n === null) return send(410, googleError(410, 'fullSyncRequired', 'Sync token is no longer valid, a full sync is required.'));
        since = n;
      }
      // A page token holds the listing's snapshot sequence and the offset reached.
      const page = q.get('pageToken') ? JSON.parse(Buffer.from(q.get('pageToken')!, 'base64url').toString('utf8')) : { upTo: seq, offset: 0 };
      const all = [...cal.values()]
        .filter((e) => e.seq > since && e.seq <= page.upTo)
        .filter((e) => token || q.get('showDeleted') === 'true' || e.status !== 'cancelled')
        .sort((a, b) => a.seq - b.seq);
      const items = all.slice(page.offset, page.offset + maxResults).map(resource);
      const more = page.offset + maxResults < all.length;
      return send(200, {
        kind: 'calendar#events',
        etag: `"p${page.upTo}"`,
        updated: new Date().toISOString(),
        timeZone: 'UTC',
        accessRole: 'owner',
        items,
        ...(more
          ? { nextPageToken: Buffer.from(JSON.stringify({ upTo: page.upTo, offset: page.offset + maxResults })).toString('base64url') }
          : { nextSyncToken: syncToken(page.upTo) }),
      });
    }
    return send(405, googleError(405, 'methodNotAllowed', 'Method Not Allowed'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const settings = { clientId, clientSecret, authUrl: `${url}/o/oauth2/v2/auth`, tokenUrl: `${url}/token`, apiUrl: url };

  return {
    url,
    clientId,
    clientSecret,
    settings,
    env: {
      GOOGLE_CLIENT_ID: clientId,
      GOOGLE_CLIENT_SECRET: clientSecret,
      GOOGLE_OAUTH_URL: settings.authUrl,
      GOOGLE_TOKEN_URL: settings.tokenUrl,
      GOOGLE_CALENDAR_API_URL: url,
    },
    addUser: (email) => void calendars.set(email, calendars.get(email) ?? new Map()),
    consentAs: (who) => void (consent = who),
    grant(email, o = {}) {
      calendarOf(email);
      const refreshToken = random('1//0g');
      refreshTokens.set(refreshToken, email);
      const { accessToken, expiresInS } = issue(email, o.expiresInS);
      return { accessToken, refreshToken, expiresAt: new Date(Date.now() + expiresInS * 1000).toISOString() };
    },
    events: (email) => [...calendarOf(email).values()],
    insertEvent(email, e) {
      return put(email, {
        id: crypto.randomBytes(13).toString('hex'),
        status: 'confirmed',
        summary: e.summary ?? 'Busy',
        transparency: e.transparent ? 'transparent' : 'opaque',
        start: { dateTime: e.start.toISOString() },
        end: { dateTime: e.end.toISOString() },
      }).id;
    },
    moveEvent(email, id, start, end) {
      const e = calendarOf(email).get(id);
      if (!e) throw new Error(`no event ${id}`);
      e.start = { ...e.start, dateTime: start.toISOString() };
      e.end = { ...e.end, dateTime: end.toISOString() };
      touch(e);
    },
    deleteEvent(email, id) {
      const e = calendarOf(email).get(id);
      if (!e) throw new Error(`no event ${id}`);
      e.status = 'cancelled';
      touch(e);
    },
    revoke(email) {
      for (const [t, who] of refreshTokens) if (who === email) refreshTokens.delete(t);
      for (const [t, a] of accessTokens) if (a.email === email) accessTokens.delete(t);
    },
    expireAccessTokens() {
      for (const a of accessTokens.values()) a.expiresAt = 0;
    },
    expireSyncTokens() {
      epoch++;
    },
    failNext: (email, status, times = 1) => void failures.set(email, { status, left: times }),
    requests,
    refreshes: (email) => refreshCounts.get(email) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
