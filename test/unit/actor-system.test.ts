import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { ActorSystem, supervisionDecision, type Behaviour, type EntityRegistry } from '../../runtime/actor-system.ts';
import { createLogger } from '../../runtime/logger.ts';
import { EntityGone, Refusal } from '../../runtime/refusal.ts';
import { LogCapture } from '../helpers/service.ts';

type CounterMsg =
  | { type: 'increment' }
  | { type: 'get_count' }
  | { type: 'explode' }
  | { type: 'explode_on_read' }
  | { type: 'refuse' }
  | { type: 'refuse_on_read' }
  | { type: 'vanish' }
  | { type: 'vanish_on_read' }
  | { type: 'lose_database' };

interface CounterReplies {
  increment: number;
  get_count: number;
  explode: never;
  explode_on_read: never;
  refuse: never;
  refuse_on_read: never;
  vanish: never;
  vanish_on_read: never;
  lose_database: never;
}

/** What pg throws when PostgreSQL cannot be reached (runtime/database-errors.ts isDatabaseUnreachable). */
const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });

interface Counter {
  count: number;
}

/**
 * A toy entity: a counter that starts at 0 on every load, with ways to crash and refuse. An id
 * in `gone` has no row (its load throws EntityGone); one in `unknown` is a caller's mistake (its
 * load refuses, as an account actor asked for an account that does not exist).
 */
function counterBehaviour() {
  const stats = { loads: 0, inReceive: 0, maxConcurrentWrites: 0 };
  const gone = new Set<string>();
  const unknown = new Set<string>();
  const behaviour: Behaviour<CounterMsg, Counter> = {
    kind: 'counter',
    async load(id) {
      stats.loads++;
      if (gone.has(id)) throw new EntityGone('counter', id);
      if (unknown.has(id)) throw new Refusal('account_not_found');
      return { count: 0 };
    },
    isRead: (msg) => ['get_count', 'explode_on_read', 'refuse_on_read', 'vanish_on_read'].includes(msg.type),
    async receive(state, msg) {
      switch (msg.type) {
        case 'increment': {
          stats.inReceive++;
          stats.maxConcurrentWrites = Math.max(stats.maxConcurrentWrites, stats.inReceive);
          await sleep(5); // long enough for a second write to overlap if writes were not serialized
          stats.inReceive--;
          return { state: { count: state.count + 1 }, reply: state.count + 1 };
        }
        case 'get_count':
          return { state, reply: state.count };
        case 'explode':
          throw new TypeError('boom');
        case 'explode_on_read':
          throw new Error('read boom');
        case 'refuse':
          throw new Refusal('invalid_parameter', 'Not that one.', { asked: 'refuse' });
        case 'refuse_on_read':
          throw new Refusal('invalid_cursor');
        case 'vanish':
        case 'vanish_on_read':
          throw new EntityGone('counter', 'whichever');
        case 'lose_database':
          throw unreachable();
        default: {
          const never: never = msg;
          throw new Error(`unhandled ${JSON.stringify(never)}`);
        }
      }
    },
  };
  return { behaviour, stats, gone, unknown };
}

interface Rig {
  system: ActorSystem;
  counters: EntityRegistry<CounterMsg, CounterReplies, Counter>;
  stats: ReturnType<typeof counterBehaviour>['stats'];
  gone: Set<string>;
  unknown: Set<string>;
  logs: LogCapture;
  /** Every supervision line, whatever its level. */
  decisions: () => Record<string, unknown>[];
  /** Supervision lines at error level: what an operator is alerted by. */
  crashes: () => Record<string, unknown>[];
}

const ERROR_LEVEL = 50;

function newSystem(logs: LogCapture): ActorSystem {
  // debug: refusals are logged at that level.
  return new ActorSystem(createLogger('debug', logs), 60_000);
}

function rig(): Rig {
  const logs = new LogCapture();
  const system = newSystem(logs);
  const { behaviour, stats, gone, unknown } = counterBehaviour();
  const counters = system.register<CounterMsg, CounterReplies, Counter>(behaviour);
  const decisions = () => logs.lines.filter((l) => l.event === 'actor_supervision');
  return { system, counters, stats, gone, unknown, logs, decisions, crashes: () => decisions().filter((l) => l.level === ERROR_LEVEL) };
}

/** pino writes asynchronously to the stream; give it a turn before reading the capture. */
const flushLogs = () => sleep(20);

test('ask returns the reply, and the state carries over between messages', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  t.is(await counters.ask('a', { type: 'get_count' }), 0);
  t.is(await counters.ask('a', { type: 'increment' }), 1);
  t.is(await counters.ask('a', { type: 'increment' }), 2);
  t.is(await counters.ask('a', { type: 'get_count' }), 2);
  t.is(stats.loads, 1, 'loaded once, on the first message');
});

test('each id has its own actor and state', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await counters.ask('a', { type: 'increment' });
  t.is(await counters.ask('b', { type: 'increment' }), 1);
  t.is(await counters.ask('a', { type: 'get_count' }), 2);
  t.is(counters.size, 2);
  t.is(stats.loads, 2);
});

test('concurrent writes are handled one at a time and see increasing state', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  const replies = await Promise.all(Array.from({ length: 10 }, () => counters.ask('a', { type: 'increment' })));
  t.deepEqual(replies, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.is(stats.maxConcurrentWrites, 1);
  t.is(await counters.ask('a', { type: 'get_count' }), 10);
});

test('a crash rejects its ask at once, logs one reset line, and the next message reloads', async (t) => {
  const { system, counters, stats, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  t.is(stats.loads, 1);

  const started = Date.now();
  await t.throwsAsync(counters.ask('a', { type: 'explode' }, 10_000), { instanceOf: TypeError, message: 'boom' });
  t.true(Date.now() - started < 2_000, 'rejected by the crash, not by the ask timeout');

  // The state was reset: the next message loads it again from scratch.
  t.is(await counters.ask('a', { type: 'get_count' }), 0);
  t.is(stats.loads, 2);

  await flushLogs();
  const lines = crashes();
  t.is(lines.length, 1);
  t.like(lines[0], { event: 'actor_supervision', message_type: 'explode', decision: 'reset' });
  t.is(lines[0].actor, '/switchboard/counter/a', 'the path names the kind and the id');
  t.like(lines[0].err, { message: 'boom' });
});

test('messages queued behind a crash are still handled, on reloaded state', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  const outcomes = await Promise.allSettled([
    counters.ask('a', { type: 'increment' }, 5_000),
    counters.ask('a', { type: 'explode' }, 5_000),
    counters.ask('a', { type: 'increment' }, 5_000),
    counters.ask('a', { type: 'increment' }, 5_000),
  ]);
  t.deepEqual(
    outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
    [1, 'boom', 1, 2],
  );
  t.is(stats.loads, 2);
});

// logCrash builds `err: {type: error.name, …}`, but pino's default `err` serializer rewrites
// `type` to the constructor name of that plain object. See the final report.
test('the crash line names the error class', async (t) => {
  const { system, counters, crashes } = rig();
  t.teardown(() => system.stop());
  await t.throwsAsync(counters.ask('a', { type: 'explode' }));
  await flushLogs();
  t.like(crashes()[0]?.err, { type: 'TypeError', message: 'boom' });
});

test('a refusal is an answer: the ask is refused, the state kept (resume), one debug line with the code', async (t) => {
  const { system, counters, stats, decisions, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  const err = await t.throwsAsync(counters.ask('a', { type: 'refuse' }), { instanceOf: Refusal });
  t.is(err?.code, 'invalid_parameter');
  t.is(err?.explanation, 'Not that one.');
  t.is(await counters.ask('a', { type: 'increment' }), 2, 'state kept: the next write goes on from it');
  t.is(stats.loads, 1, 'not reloaded');
  await flushLogs();
  t.is(crashes().length, 0, 'nothing at error level');
  t.is(decisions().length, 1);
  t.like(decisions()[0], { actor: '/switchboard/counter/a', message_type: 'refuse', decision: 'resume', code: 'invalid_parameter', level: 20 });
  t.deepEqual(decisions()[0].details, { asked: 'refuse' });
});

test('a refusal while loading is an answer too: the actor stays, not loaded, and the next message loads again', async (t) => {
  const { system, counters, stats, unknown, decisions } = rig();
  t.teardown(() => system.stop());
  unknown.add('nobody');
  const err = await t.throwsAsync(counters.ask('nobody', { type: 'increment' }, 5_000), { instanceOf: Refusal });
  t.is(err?.code, 'account_not_found');
  t.is(counters.size, 1, 'not stopped');
  unknown.delete('nobody');
  t.is(await counters.ask('nobody', { type: 'increment' }, 5_000), 1);
  t.is(stats.loads, 2);
  await flushLogs();
  t.like(decisions()[0], { decision: 'resume', code: 'account_not_found' });
});

test('a refused read keeps the state and logs decision "resume"', async (t) => {
  const { system, counters, stats, decisions } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await t.throwsAsync(counters.ask('a', { type: 'refuse_on_read' }), { instanceOf: Refusal });
  t.is(await counters.ask('a', { type: 'get_count' }), 1);
  t.is(stats.loads, 1);
  await flushLogs();
  t.like(decisions()[0], { message_type: 'refuse_on_read', decision: 'resume' });
});

test('a failing read is a crash too: logged with decision "reset", and the next message reloads', async (t) => {
  const { system, counters, stats, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await t.throwsAsync(counters.ask('a', { type: 'explode_on_read' }, 10_000), { message: 'read boom' });
  t.is(await counters.ask('a', { type: 'get_count' }), 0, 'state dropped');
  t.is(stats.loads, 2);
  await flushLogs();
  t.is(crashes().length, 1);
  t.like(crashes()[0], { actor: '/switchboard/counter/a', message_type: 'explode_on_read', decision: 'reset' });
});

test('an entity gone stops its actor: out of the registry, queued asks answered at once, one warn line', async (t) => {
  const { system, counters, stats, gone, decisions, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  const started = Date.now();
  const outcomes = await Promise.allSettled([
    counters.ask('a', { type: 'vanish' }, 10_000),
    counters.ask('a', { type: 'increment' }, 10_000),
    counters.ask('a', { type: 'increment' }, 10_000),
  ]);
  t.true(Date.now() - started < 2_000, 'the queued asks were answered, not left to time out');
  t.deepEqual(
    outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : o.value)),
    ['EntityGone', 'EntityGone', 'EntityGone'],
  );
  t.is(counters.size, 0, 'stopped and forgotten');
  await flushLogs();
  t.is(crashes().length, 0, 'not an error line');
  t.is(decisions().length, 1, 'one line for the one decision');
  t.like(decisions()[0], { actor: '/switchboard/counter/a', message_type: 'vanish', decision: 'stop', level: 40 });

  // The next ask spawns a fresh actor. While the row is missing its load stops it again; once the
  // entity exists it loads as usual.
  gone.add('a');
  await t.throwsAsync(counters.ask('a', { type: 'get_count' }, 5_000), { instanceOf: EntityGone });
  t.is(counters.size, 0);
  gone.delete('a');
  t.is(await counters.ask('a', { type: 'increment' }, 5_000), 1);
  t.is(stats.loads, 3);
});

test('a read that finds its entity gone resets the actor (it runs beside the mailbox); the next load stops it', async (t) => {
  const { system, counters, gone, decisions, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  gone.add('a');
  await t.throwsAsync(counters.ask('a', { type: 'vanish_on_read' }, 5_000), { instanceOf: EntityGone });
  t.is(counters.size, 1, 'not stopped by the read itself');
  await t.throwsAsync(counters.ask('a', { type: 'get_count' }, 5_000), { instanceOf: EntityGone });
  t.is(counters.size, 0, 'stopped by the load of the next message');
  await flushLogs();
  t.is(crashes().length, 0);
  t.deepEqual(
    decisions().map((l) => [l.message_type, l.decision, l.level]),
    [['vanish_on_read', 'reset', 40], ['get_count', 'stop', 40]],
  );
});

test('a crash because the database is away resets the actor without an error line', async (t) => {
  const { system, counters, stats, decisions, crashes } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await t.throwsAsync(counters.ask('a', { type: 'lose_database' }, 5_000), { message: /ECONNREFUSED/ });
  t.is(await counters.ask('a', { type: 'get_count' }), 0, 'reset: reloaded from scratch');
  t.is(stats.loads, 2);
  await flushLogs();
  t.is(crashes().length, 0, 'the outage is logged once by the process, not per actor');
  t.like(decisions()[0], { decision: 'reset', database_unreachable: true, level: 20 });
});

test('supervisionDecision: refusal → resume, entity gone → stop, anything else → reset', (t) => {
  t.is(supervisionDecision(new Refusal('customer_not_found')), 'resume');
  t.is(supervisionDecision(new EntityGone('call', 'c-1')), 'stop');
  t.is(supervisionDecision(new TypeError('boom')), 'reset');
  t.is(supervisionDecision(unreachable()), 'reset');
  t.is(supervisionDecision('a string thrown'), 'reset');
  // An error that merely looks like a refusal (a code, a message) is not one: only the domain's class counts.
  t.is(supervisionDecision(Object.assign(new Error('x'), { code: 'customer_not_found' })), 'reset');
});

test('reload(id) makes the next message load again', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await counters.ask('b', { type: 'increment' });
  counters.reload('a');
  t.is(await counters.ask('a', { type: 'get_count' }), 0);
  t.is(await counters.ask('b', { type: 'get_count' }), 1, 'other ids keep their state');
  t.is(stats.loads, 3);
});

test('reload of an id without an actor does nothing', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  t.notThrows(() => counters.reload('nobody'));
  t.is(counters.size, 0);
  t.is(stats.loads, 0);
});

test('stopIdle stops idle actors and a later ask spawns a fresh one', async (t) => {
  const { system, counters, stats } = rig();
  t.teardown(() => system.stop());
  await counters.ask('a', { type: 'increment' });
  await counters.ask('b', { type: 'increment' });
  t.is(counters.size, 2);

  t.is(counters.stopIdle(60_000), 0, 'nothing has been idle for a minute');
  t.is(counters.size, 2);

  t.is(counters.stopIdle(0, Date.now() + 1), 2);
  t.is(counters.size, 0);

  t.is(await counters.ask('a', { type: 'get_count' }), 0, 'a fresh actor loads fresh state');
  t.is(counters.size, 1);
  t.is(stats.loads, 3);
});

test('stopIdle leaves an actor with an ask in flight', async (t) => {
  const { system, counters } = rig();
  t.teardown(() => system.stop());
  const pending = counters.ask('a', { type: 'increment' });
  t.is(counters.stopIdle(0, Date.now() + 1_000), 0);
  t.is(await pending, 1);
  t.is(counters.stopIdle(0, Date.now() + 1_000), 1);
});

// The nact system is named `switchboard-${pid}-${Date.now()}`; nact keeps systems in a map by
// name, so a second system created in the same millisecond replaces the first. See the report.
test('two systems created in the same millisecond are independent', async (t) => {
  const realNow = Date.now;
  let first: ActorSystem | undefined;
  let second: ActorSystem | undefined;
  t.teardown(() => {
    Date.now = realNow;
    first?.stop();
    second?.stop();
  });
  Date.now = () => 1; // a millisecond no other system of this file is created in
  try {
    first = new ActorSystem(createLogger('silent'), 60_000);
    second = new ActorSystem(createLogger('silent'), 60_000);
  } finally {
    Date.now = realNow;
  }
  const a = first.register<CounterMsg, CounterReplies, Counter>(counterBehaviour().behaviour);
  const b = second.register<CounterMsg, CounterReplies, Counter>(counterBehaviour().behaviour);
  await a.ask('x', { type: 'increment' }, 1_000);
  t.is(await b.ask('x', { type: 'get_count' }, 1_000), 0);
  second.stop();
  t.is(await a.ask('x', { type: 'get_count' }, 1_000), 1);
});

test('an actor holding live resources is never stopped for being idle; once released it is', async (t) => {
  const logs = new LogCapture();
  const system = newSystem(logs);
  const { behaviour } = counterBehaviour();
  // "Live" while the count is odd: the stand-in for a call holding its media stream.
  const counters = system.register<CounterMsg, CounterReplies, Counter>({ ...behaviour, holdsLiveResources: (s) => s.count % 2 === 1 });
  await counters.ask('call', { type: 'increment' });
  t.is(counters.stopIdle(0, Date.now() + 10 * 60_000), 0, 'a live actor outlives any quiet');
  t.is(counters.size, 1);
  await counters.ask('call', { type: 'increment' });
  t.is(counters.stopIdle(0, Date.now() + 1), 1, 'released: stopped when idle');
  system.stop();
});
