/**
 * A real CalDAV server for tests: Debian's Radicale (`/usr/bin/radicale`, installed by `.ci/run`)
 * on 127.0.0.1 and a free port, with its own temp folder for the configuration, the storage and
 * the users file. Users live in a plain htpasswd file (`htpasswd_encryption = plain`, so nothing
 * else is needed to write it) that Radicale reads again on every login: `setPassword` takes
 * effect at the next request, as a changed password does on a real server.
 *
 *   const radicale = await startRadicale();            // skip the file when radicaleMissing is set
 *   await radicale.addUser('ana', 'app-password');     // the user and its calendar (MKCALENDAR)
 *   radicale.calendarUrl('ana')                         // http://127.0.0.1:<port>/ana/calendar/
 *   await radicale.putEvent('ana', { uid, start, end, title });   // another client writes
 *   await radicale.stop();
 *
 * Radicale's failed-login delay is off (`delay = 0`) so tests of a wrong password stay fast.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ICAL from 'ical.js';
import { eventToICalendar } from '../../calendars/caldav/ical-event.ts';
import { freePort } from '../e2e/process-helpers.ts';

export const RADICALE_BIN = '/usr/bin/radicale';

/** Why CalDAV tests cannot run here (null when they can): only an absent Radicale skips them. */
export const radicaleMissing: string | null = existsSync(RADICALE_BIN)
  ? null
  : `${RADICALE_BIN} is absent: install Debian's radicale package (.ci/run does) to run the CalDAV tests`;

/** The name of the calendar collection addUser makes for each user. */
export const RADICALE_CALENDAR = 'calendar';

export interface RadicaleEvent {
  uid: string;
  start: Date;
  end: Date;
  title?: string;
  /** TRANSP:TRANSPARENT (shown as free). */
  free?: boolean;
  /** The whole calendar object instead of the one built from the fields above (recurring events, TRANSP, STATUS…). */
  ics?: string;
}

export interface Radicale {
  /** The server root, `http://127.0.0.1:<port>/` (a CalDAV client discovers the user's calendars from it). */
  readonly url: string;
  /** The user's calendar collection made by addUser: `<url><user>/calendar/`. */
  calendarUrl(user: string): string;
  /** Adds the user (or sets its password) and makes its calendar collection with MKCALENDAR. */
  addUser(user: string, password: string): Promise<void>;
  /** Changes the user's password; the old one is refused from the next request. */
  setPassword(user: string, password: string): Promise<void>;
  /** Writes an event into the user's calendar as another client would; returns its URL. */
  putEvent(user: string, event: RadicaleEvent): Promise<string>;
  /** Moves an event (by its URL) to new times as another client would: GET, change DTSTART/DTEND, PUT with If-Match. */
  moveEvent(user: string, url: string, start: Date, end: Date): Promise<void>;
  /** Deletes an event (by the URL putEvent returned) as another client would. */
  deleteEvent(user: string, url: string): Promise<void>;
  /** A request as the user (Basic auth with its current password). */
  request(user: string, method: string, url: string, body?: string, headers?: Record<string, string>): Promise<Response>;
  /** Radicale's own output so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRadicale(): Promise<Radicale> {
  if (radicaleMissing) throw new Error(radicaleMissing);
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'radicale-'));
  const usersFile = path.join(root, 'users');
  const configFile = path.join(root, 'config');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const passwords = new Map<string, string>();
  await fs.writeFile(usersFile, '');
  await fs.writeFile(
    configFile,
    [
      '[server]',
      `hosts = 127.0.0.1:${port}`,
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${usersFile}`,
      'htpasswd_encryption = plain',
      'delay = 0',
      '[rights]',
      'type = owner_only',
      '[storage]',
      `filesystem_folder = ${path.join(root, 'collections')}`,
      '[web]',
      'type = none',
      '[logging]',
      'level = warning',
      '',
    ].join('\n'),
  );

  let output = '';
  const child = spawn(RADICALE_BIN, ['--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Ready once it answers HTTP (an anonymous request is refused with 401, which is an answer).
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      running.delete(child);
      await fs.rm(root, { recursive: true, force: true });
      throw new Error(`radicale exited (${child.exitCode}): ${output}`);
    }
    try {
      await fetch(url, { method: 'OPTIONS', signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        running.delete(child);
        await fs.rm(root, { recursive: true, force: true });
        throw new Error(`radicale did not answer on ${url} within 15 s: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // Radicale reads the users file at every login: replace it whole (write aside, then rename) so a
  // login never reads it half-written, one write at a time so a later one cannot be overtaken.
  let writing = Promise.resolve();
  const writeUsers = () =>
    (writing = writing.then(async () => {
      const aside = `${usersFile}.${process.pid}.tmp`;
      await fs.writeFile(aside, [...passwords].map(([u, p]) => `${u}:${p}\n`).join(''));
      await fs.rename(aside, usersFile);
    }));
  const calendarUrl = (user: string) => `${url}${encodeURIComponent(user)}/${RADICALE_CALENDAR}/`;

  const request: Radicale['request'] = (user, method, target, body, headers = {}) => {
    const password = passwords.get(user);
    if (password === undefined) throw new Error(`no Radicale user ${user}`);
    return fetch(target, {
      method,
      body,
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, ...headers },
    });
  };

  const expectOk = async (res: Response, what: string) => {
    if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  };

  return {
    url,
    calendarUrl,
    async addUser(user, password) {
      passwords.set(user, password);
      await writeUsers();
      // Radicale makes the principal collection (/<user>/) at the user's first authenticated request.
      await expectOk(await request(user, 'PROPFIND', `${url}${encodeURIComponent(user)}/`, undefined, { depth: '0' }), `principal of ${user}`);
      const existing = await request(user, 'PROPFIND', calendarUrl(user), undefined, { depth: '0' });
      if (existing.status === 207) return;
      const mkcalendar =
        '<?xml version="1.0" encoding="utf-8"?>' +
        '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>' +
        `<D:displayname>${user}</D:displayname>` +
        '<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>' +
        '</D:prop></D:set></C:mkcalendar>';
      await expectOk(
        await request(user, 'MKCALENDAR', calendarUrl(user), mkcalendar, { 'content-type': 'application/xml; charset=utf-8' }),
        `MKCALENDAR for ${user}`,
      );
    },
    async setPassword(user, password) {
      if (!passwords.has(user)) throw new Error(`no Radicale user ${user}`);
      passwords.set(user, password);
      await writeUsers();
    },
    async putEvent(user, event) {
      const target = `${calendarUrl(user)}${encodeURIComponent(event.uid)}.ics`;
      let ics = event.ics;
      if (!ics) {
        const vcalendar = ICAL.Component.fromString(
          eventToICalendar({ uid: event.uid, start: event.start, end: event.end, timezone: 'UTC', title: event.title ?? 'Busy', description: '' }),
        );
        if (event.free) vcalendar.getFirstSubcomponent('vevent')!.updatePropertyWithValue('transp', 'TRANSPARENT');
        ics = vcalendar.toString();
      }
      await expectOk(await request(user, 'PUT', target, ics, { 'content-type': 'text/calendar; charset=utf-8' }), `PUT ${target}`);
      return target;
    },
    async moveEvent(user, target, start, end) {
      const current = await request(user, 'GET', target);
      await expectOk(current, `GET ${target}`);
      const vcalendar = ICAL.Component.fromString(await current.text());
      const event = new ICAL.Event(vcalendar.getFirstSubcomponent('vevent')!);
      event.startDate = ICAL.Time.fromJSDate(start, true);
      event.endDate = ICAL.Time.fromJSDate(end, true);
      const headers: Record<string, string> = { 'content-type': 'text/calendar; charset=utf-8' };
      const etag = current.headers.get('etag');
      if (etag) headers['if-match'] = etag;
      await expectOk(await request(user, 'PUT', target, vcalendar.toString(), headers), `PUT ${target}`);
    },
    async deleteEvent(user, target) {
      await expectOk(await request(user, 'DELETE', target), `DELETE ${target}`);
    },
    request,
    log: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      running.delete(child);
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}
