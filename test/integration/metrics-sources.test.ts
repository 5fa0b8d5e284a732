/**
 * Metrics counted where no test call reaches them (issue 25 §1): the barge-in latency of the
 * OpenAI Realtime bridge (speech_started to the carrier's queue cleared), against the strict fake
 * over real WebSockets; actor restarts by kind and supervision decision; and the after-commit hook
 * ledger lines are counted through.
 */
import test from 'ava';
import { OpenAIRealtimeBridge } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { TurnSettings } from '../../telephony/speech-bridge.ts';
import { startFakeRealtime } from '../fakes/openai-realtime.ts';
import { agentSetupFor, eventually, quiet, recorder } from '../helpers/realtime.ts';
import { metricsRegistry } from '../../runtime/metrics.ts';
import { ActorSystem, type Behaviour } from '../../runtime/actor-system.ts';
import { EntityGone, Refusal } from '../../runtime/refusal.ts';
import { parseMetrics, valueOf } from '../helpers/metrics.ts';
import { freshDatabase } from '../helpers/db.ts';
import { afterCommit, createPool, withTransaction } from '../../db/pool.ts';

const read = async () => parseMetrics(await metricsRegistry.metrics());

test.serial('barge-in: one observation of switchboard_call_barge_in_clear_seconds per interruption, none for speech before the agent speaks', async (t) => {
  const turn: TurnSettings = { silence_ms: 200, threshold: 0.6, prefix_padding_ms: 250, backchannel_max_ms: 0 };
  const fake = await startFakeRealtime({ greetingFrames: 5, replyFrames: 50, frameIntervalMs: 8 });
  t.teardown(() => fake.close());
  const { rec, handlers, until } = recorder();
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor({ turn }), handlers);
  t.teardown(() => conn.close());
  const server = await fake.waitForConnection();
  await eventually(() => server.sent.some((e) => e.type === 'session.updated'));
  const before = await read();
  // Speech before the take-over is no barge-in: nothing of the agent's is playing.
  await server.calleeSpeaks({ durationMs: 100 });
  t.is(valueOf(await read(), 'switchboard_call_barge_in_clear_seconds_count') - valueOf(before, 'switchboard_call_barge_in_clear_seconds_count'), 0);
  conn.takeOver();
  await until(() => rec.audio.length >= 5);
  void server.calleeSpeaks({ durationMs: 300 });
  await until(() => rec.interruptedAt.length === 1);
  const after = await read();
  t.is(valueOf(after, 'switchboard_call_barge_in_clear_seconds_count') - valueOf(before, 'switchboard_call_barge_in_clear_seconds_count'), 1);
  t.true(valueOf(after, 'switchboard_call_barge_in_clear_seconds_bucket', { le: '0.5' }) - valueOf(before, 'switchboard_call_barge_in_clear_seconds_bucket', { le: '0.5' }) === 1, 'cleared well within half a second');
});

test.serial('actor restarts by kind and decision: a broken invariant resets, a gone entity stops, a refusal is neither', async (t) => {
  type Msg = { type: 'break' } | { type: 'vanish' } | { type: 'refuse' };
  const behaviour: Behaviour<Msg, object> = {
    kind: 'metrics_probe',
    load: async () => ({}),
    isRead: () => false,
    receive: async (_state, msg) => {
      if (msg.type === 'vanish') throw new EntityGone('metrics_probe', 'x');
      if (msg.type === 'refuse') throw new Refusal('customer_not_found');
      throw new Error('invariant broken');
    },
  };
  const system = new ActorSystem(quiet, 60_000);
  t.teardown(() => system.stop());
  const probes = system.register<Msg, { break: never; vanish: never; refuse: never }, object>(behaviour);
  const before = await read();
  await t.throwsAsync(probes.ask('a', { type: 'refuse' }), { instanceOf: Refusal });
  await t.throwsAsync(probes.ask('a', { type: 'break' }), { message: 'invariant broken' });
  await t.throwsAsync(probes.ask('a', { type: 'break' }));
  await t.throwsAsync(probes.ask('b', { type: 'vanish' }), { instanceOf: EntityGone });
  const after = await read();
  const moved = (decision: string) => valueOf(after, 'switchboard_actor_restarts_total', { kind: 'metrics_probe', decision }) - valueOf(before, 'switchboard_actor_restarts_total', { kind: 'metrics_probe', decision });
  t.is(moved('reset'), 2);
  t.is(moved('stop'), 1);
  t.true(valueOf(after, 'switchboard_actors_loaded', { kind: 'metrics_probe' }) >= 1, 'the reset actor is still there');
  t.is(valueOf(after, 'switchboard_actor_mailbox_depth', { kind: 'metrics_probe' }), 0, 'nothing waits');
});

test.serial('ledger lines count once their transaction commits: not while it is open, never when it rolls back', async (t) => {
  const pool = createPool(await freshDatabase(), 2);
  t.teardown(() => pool.end());
  const counted: string[] = [];
  await t.throwsAsync(
    withTransaction(pool, async (client) => {
      afterCommit(client, () => counted.push('rolled back'));
      throw new Error('the money change failed');
    }),
  );
  await withTransaction(pool, async (client) => {
    afterCommit(client, () => counted.push('committed'));
    await client.query('SELECT 1');
    t.deepEqual(counted, [], 'nothing before the commit');
  });
  t.deepEqual(counted, ['committed']);
  // Outside a transaction a statement has committed already: counted at once.
  afterCommit(pool, () => counted.push('autocommit'));
  t.deepEqual(counted, ['committed', 'autocommit']);
  // Work that throws after the commit never makes the committed transaction fail.
  t.is(await withTransaction(pool, async (client) => (afterCommit(client, () => { throw new Error('counting broke'); }), 'done')), 'done');
});
