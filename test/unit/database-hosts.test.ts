import test from 'ava';
import { parse } from 'pg-connection-string';
import { DatabaseHosts, DatabaseUrlError, logHostMoves, parseDatabaseUrl } from '../../runtime/database-hosts.ts';

test('a list of hosts: one single-host URL per host, read-write by default, target_session_attrs dropped and every other option kept', (t) => {
  const target = parseDatabaseUrl('postgres://switchboard:s3cret@db-a.internal:5432,db-b.internal:5433/switchboard?sslmode=require&target_session_attrs=read-write&application_name=sb');
  t.deepEqual(target.hosts, [
    { host: 'db-a.internal', port: 5432 },
    { host: 'db-b.internal', port: 5433 },
  ]);
  t.is(target.targetSessionAttrs, 'read-write');
  t.deepEqual(target.urls, [
    'postgres://switchboard:s3cret@db-a.internal:5432/switchboard?sslmode=require&application_name=sb',
    'postgres://switchboard:s3cret@db-b.internal:5433/switchboard?sslmode=require&application_name=sb',
  ]);
  t.is(parseDatabaseUrl('postgresql://u@h1,h2/db').targetSessionAttrs, 'read-write', 'read-write unless said: every role writes');
  t.is(parseDatabaseUrl('postgresql://u@h1,h2/db?target_session_attrs=primary').targetSessionAttrs, 'primary');
  t.is(parseDatabaseUrl('postgresql://u@h1,h2/db?target_session_attrs=any').targetSessionAttrs, 'any');
});

test('missing ports are 5432; IPv6 addresses in brackets, with or without a port', (t) => {
  const target = parseDatabaseUrl('postgres://u:p@[::1]:5433,db-b,[fe80::1%25eth0],10.0.0.7:/x');
  t.deepEqual(target.hosts, [
    { host: '::1', port: 5433 },
    { host: 'db-b', port: 5432 },
    { host: 'fe80::1%eth0', port: 5432 },
    { host: '10.0.0.7', port: 5432 },
  ]);
  t.deepEqual(target.urls, ['postgres://u:p@[::1]:5433/x', 'postgres://u:p@db-b:5432/x', 'postgres://u:p@[fe80::1%25eth0]:5432/x', 'postgres://u:p@10.0.0.7:5432/x']);
  // pg reads each as the host it names.
  t.like(parse(target.urls[0]), { host: '::1', port: '5433', user: 'u', password: 'p', database: 'x' });
  t.like(parse(target.urls[1]), { host: 'db-b', port: '5432' });
});

test('percent-encoded credentials are kept as written, and a comma or @ in them is no host', (t) => {
  const target = parseDatabaseUrl('postgres://us%40er:p%2Cw%40rd,@x@h1:5432,h2:5433/db%20one?options=-c%20search_path%3Dpublic,x');
  t.deepEqual(
    target.hosts.map((h) => h.host),
    ['h1', 'h2'],
  );
  t.is(target.urls[1], 'postgres://us%40er:p%2Cw%40rd,@x@h2:5433/db%20one?options=-c%20search_path%3Dpublic,x');
  t.like(parse(target.urls[1]), { user: 'us@er', password: 'p,w@rd,@x', host: 'h2', port: '5433', database: 'db one', options: '-c search_path=public,x' });
});

test('one host: its URL as written, target_session_attrs any unless asked (libpq\'s default)', (t) => {
  const url = 'postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable';
  t.deepEqual(parseDatabaseUrl(url), { hosts: [{ host: '127.0.0.1', port: 5432 }], urls: [url], targetSessionAttrs: 'any' });
  t.deepEqual(parseDatabaseUrl('postgres://u@db/x?target_session_attrs=read-write'), { hosts: [{ host: 'db', port: 5432 }], urls: ['postgres://u@db/x'], targetSessionAttrs: 'read-write' });
  // No host, a socket directory, a non-URL form: handed to pg as before.
  t.deepEqual(parseDatabaseUrl('postgres:///x').urls, ['postgres:///x']);
  t.deepEqual(parseDatabaseUrl('postgres://%2Fvar%2Frun%2Fpostgresql/x').hosts, [{ host: '/var/run/postgresql', port: 5432 }]);
  t.deepEqual(parseDatabaseUrl('/var/run/postgresql x'), { hosts: [], urls: ['/var/run/postgresql x'], targetSessionAttrs: 'any' });
});

test('a list that cannot be used is refused in one line that never repeats the password', (t) => {
  const cases: [string, RegExp][] = [
    ['postgres://u:pw@h1,,h2/x', /^host 2 of the list is empty/],
    ['postgres://u:pw@h1,/x', /^host 2 of the list is empty/],
    ['postgres://u:pw@h1,::1/x', /^host 2 of the list has several colons: an IPv6 address goes in brackets/],
    ['postgres://u:pw@h1,[db-b]:5432/x', /^host 2 of the list is not an IPv6 address in brackets/],
    ['postgres://u:pw@h1,:5433/x', /^host 2 of the list has a port but no host/],
    ['postgres://u:pw@h1:0,h2/x', /^host 1 of the list has a port that is not a number from 1 to 65535/],
    ['postgres://u:pw@h1:54x,h2/x', /^host 1 of the list has a port that is not a number from 1 to 65535/],
    ['postgres://u:pw@h1,h2/x?target_session_attrs=prefer-standby', /^target_session_attrs must be read-write, primary or any/],
    ['postgres://u:pw@h1,h2/x?host=h3', /takes no host= option/],
  ];
  for (const [url, message] of cases) {
    const err = t.throws(() => parseDatabaseUrl(url), { instanceOf: DatabaseUrlError, message }, url);
    t.false(err!.message.includes('pw'));
  }
});

test('the host believed primary moves on when it fails, once per failure of the believed host', (t) => {
  const hosts = new DatabaseHosts(parseDatabaseUrl('postgres://u@h1:5432,h2:5433,[::1]:5434/x'));
  t.is(hosts.currentHost, 'h1:5432');
  t.is(hosts.pick().url, 'postgres://u@h1:5432/x');
  hosts.refused(0);
  t.is(hosts.currentHost, 'h2:5433');
  // A second connection made for h1 failing late moves nothing: h2 is already believed.
  hosts.refused(0);
  t.is(hosts.currentHost, 'h2:5433');
  hosts.refused(1);
  t.is(hosts.currentHost, '[::1]:5434');
  hosts.refused(2);
  t.is(hosts.currentHost, 'h1:5432', 'around the list');
  const one = new DatabaseHosts(parseDatabaseUrl('postgres://u@h1/x'));
  one.refused(0);
  t.is(one.pick().index, 0);
  t.is(DatabaseHosts.of('postgres://u@h1,h2/x'), DatabaseHosts.of('postgres://u@h1,h2/x'), 'one belief per URL in the process');
});

test('each move of the believed host is one warn line naming both hosts and why, never the password', (t) => {
  const url = 'postgres://app:s3cret-pw@db-a.internal:5432,db-b.internal:5433/switchboard';
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const stop = logHostMoves(url, { warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) } as never);
  const hosts = DatabaseHosts.of(url);
  hosts.refused(0);
  hosts.refused(0); // a late failure of the old host: no move, no line
  hosts.refused(1, 'write_refused');
  stop();
  hosts.refused(0, 'read_only'); // unsubscribed
  t.deepEqual(lines.map((l) => l.obj), [
    { event: 'database_host_moved', from: 'db-a.internal:5432', to: 'db-b.internal:5433', reason: 'unreachable' },
    { event: 'database_host_moved', from: 'db-b.internal:5433', to: 'db-a.internal:5432', reason: 'write_refused' },
  ]);
  t.false(JSON.stringify(lines).includes('s3cret-pw'));
  const single: unknown[] = [];
  logHostMoves('postgres://u@only-host/x', { warn: (o: unknown) => void single.push(o) } as never);
  DatabaseHosts.of('postgres://u@only-host/x').refused(0);
  t.deepEqual(single, [], 'one host never moves');
});
