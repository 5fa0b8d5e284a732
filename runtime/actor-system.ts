import nact from 'nact';
import type { Logger } from './logger.ts';
import { EntityGone, isRefusal } from './refusal.ts';
import { isDatabaseUnreachable } from './database-errors.ts';
import { countActorRestart, watchActors, type ActorKindSample } from './metrics.ts';

/**
 * nact behind one small, typed surface: a root supervisor, per-kind supervisors that spawn one
 * actor per entity id on demand, idle stop, and `ask` with a typed reply. nact itself is small
 * and little maintained; nothing outside this file imports it.
 */

/** A message of an actor: a discriminated union on a snake_case `type` (STYLE 4). */
export interface Message {
  type: string;
}

/** The behaviour of one kind of entity actor. */
export interface Behaviour<Msg extends Message, State> {
  /** Name of the kind, the middle part of every actor path (`/switchboard/account/<id>`). */
  kind: string;
  /** Loads the entity from the database: on the first message, and again after a crash or a reset. */
  load(id: string): Promise<State>;
  /**
   * Reads go straight to PostgreSQL, so they need not wait behind this entity's writes; they
   * run concurrently and never change state. Everything else is handled one at a time.
   */
  isRead(msg: Msg): boolean;
  /** Handles one message; the returned state replaces the old one. Replies only after commit. */
  receive(state: State, msg: Msg): Promise<{ state: State; reply: unknown }>;
  /**
   * True while the actor holds something live that only it can release (a call's media stream,
   * agent connection and timers): such an actor is never stopped for being idle, however long
   * its audio flows without a message.
   */
  holdsLiveResources?(state: State): boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
type Envelope<Msg> = { msg: Msg; sender: unknown } | { msg: { type: '__reload' }; sender?: undefined };
type Slot<State> = { loaded: false } | { loaded: true; state: State };

interface Entry {
  ref: nact.Ref<unknown>;
  inflight: number;
  lastUsedMs: number;
  /** The actor's state as of its last handled message, while it is loaded (reads use it directly). */
  loaded: { state: unknown } | null;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** One registry per kind: finds or spawns the actor of an id and asks it. */
export class EntityRegistry<Msg extends Message, Replies extends Record<Msg['type'], unknown>, State> {
  private readonly entries = new Map<string, Entry>();
  /** Actors spawned so far, numbering each one's nact name. */
  private incarnations = 0;

  constructor(
    private readonly parent: nact.Ref<unknown>,
    private readonly behaviour: Behaviour<Msg, State>,
    private readonly log: Logger,
  ) {}

  /** Sends `msg` to the actor of `id` and waits for its reply; a refusal or a crash is re-thrown. */
  async ask<T extends Msg['type']>(id: string, msg: Extract<Msg, { type: T }>, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Replies[T]> {
    const entry = this.entryFor(id);
    entry.inflight++;
    try {
      // A read never waits for the mailbox (it runs concurrently with writes anyway), so once the
      // actor is loaded it is answered from its current state without the round trip through nact.
      if (entry.loaded && this.behaviour.isRead(msg)) return (await this.read(id, entry.loaded.state as State, msg)) as Replies[T];
      const outcome = (await nact.query(entry.ref as nact.Ref<any>, (sender: unknown) => ({ msg, sender }), timeoutMs)) as Outcome;
      if (!outcome.ok) throw outcome.error;
      return outcome.value as Replies[T];
    } finally {
      entry.inflight--;
      entry.lastUsedMs = Date.now();
    }
  }

  private async read(id: string, state: State, msg: Msg): Promise<unknown> {
    try {
      return (await this.behaviour.receive(state, msg)).reply;
    } catch (error) {
      this.readFailed(id, msg.type, error);
      throw error;
    }
  }

  /**
   * Supervision of a read that failed. A read runs beside the mailbox, so it cannot stop its
   * actor under messages already queued: anything but a refusal resets it (through the mailbox),
   * and if the entity is gone, the next message's load finds so and stops it.
   */
  private readFailed(id: string, messageType: string, error: unknown): void {
    const decision = supervisionDecision(error) === 'resume' ? 'resume' : 'reset';
    logDecision(this.log, this.pathOf(id), messageType, error, decision);
    if (decision === 'reset') {
      countActorRestart(this.behaviour.kind, 'reset');
      this.reload(id);
    }
  }

  private pathOf(id: string): string {
    return `/switchboard/${this.behaviour.kind}/${id}`;
  }

  /** Drops the cached state of `id` (another process changed the entity); the next message reloads. */
  reload(id: string): void {
    const entry = this.entries.get(id);
    if (entry) entry.loaded = null;
    if (entry) nact.dispatch(entry.ref as nact.Ref<any>, { msg: { type: '__reload' } });
  }

  /** Drops the cached state of every loaded actor (changes may have been missed); each reloads on its next message. */
  reloadAll(): void {
    for (const id of this.entries.keys()) this.reload(id);
  }

  /** Stops actors that have had nothing to do for `idleMs`. */
  stopIdle(idleMs: number, nowMs = Date.now()): number {
    let stopped = 0;
    for (const [id, entry] of this.entries) {
      const live = entry.loaded && this.behaviour.holdsLiveResources?.(entry.loaded.state as State);
      if (entry.inflight === 0 && nowMs - entry.lastUsedMs >= idleMs && !live) {
        // Removed from the map before stop(): no later ask can reach a stopped actor.
        this.entries.delete(id);
        nact.stop(entry.ref);
        stopped++;
      }
    }
    return stopped;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The metrics' view (runtime/metrics.ts): actors alive and messages asked of them not yet answered. */
  sample(): ActorKindSample {
    let mailbox = 0;
    for (const entry of this.entries.values()) mailbox += entry.inflight;
    return { kind: this.behaviour.kind, actors: this.entries.size, mailbox };
  }

  private entryFor(id: string): Entry {
    let entry = this.entries.get(id);
    if (!entry) {
      const created: Entry = { ref: undefined as unknown as nact.Ref<unknown>, inflight: 0, lastUsedMs: Date.now(), loaded: null };
      created.ref = this.spawn(id, created);
      entry = created;
      this.entries.set(id, entry);
    }
    return entry;
  }

  private spawn(id: string, entry: Entry): nact.Ref<unknown> {
    const { behaviour, log } = this;
    const path = this.pathOf(id);
    const reply = (sender: unknown, outcome: Outcome) => nact.dispatch(sender as nact.Ref<any>, outcome);

    const handle = async (slot: Slot<State>, envelope: Envelope<Msg>): Promise<Slot<State>> => {
      const next = await step(slot, envelope);
      entry.loaded = next.loaded ? { state: next.state } : null;
      return next;
    };

    const step = async (slot: Slot<State>, envelope: Envelope<Msg>): Promise<Slot<State>> => {
      if (envelope.msg.type === '__reload') return { loaded: false };
      const { msg, sender } = envelope as { msg: Msg; sender: unknown };
      // Whatever fails is answered at once (nact would drop the message and let the caller time
      // out), then thrown on to onCrash, which decides what becomes of the actor.
      let state: State;
      try {
        state = slot.loaded ? slot.state : await behaviour.load(id);
      } catch (error) {
        reply(sender, { ok: false, error });
        throw error;
      }
      if (behaviour.isRead(msg)) {
        behaviour.receive(state, msg).then(
          ({ reply: value }) => reply(sender, { ok: true, value }),
          (error) => {
            this.readFailed(id, msg.type, error);
            reply(sender, { ok: false, error });
          },
        );
        return { loaded: true, state };
      }
      try {
        const result = await behaviour.receive(state, msg);
        reply(sender, { ok: true, value: result.reply });
        return { loaded: true, state: result.state };
      } catch (error) {
        reply(sender, { ok: false, error });
        throw error;
      }
    };

    // Each incarnation has its own nact name: an actor stopped by its supervisor leaves its parent
    // a moment after onCrash returns, and an ask in that moment spawns the id's next one.
    return nact.spawn(this.parent as nact.Ref<any>, handle as any, `${id}.${++this.incarnations}`, {
      initialState: { loaded: false },
      onCrash: (msg: any, error: unknown, ctx: any) => {
        const decision = supervisionDecision(error);
        logDecision(log, path, msg?.msg?.type ?? 'load', error, decision);
        if (decision !== 'resume') countActorRestart(behaviour.kind, decision);
        switch (decision) {
          case 'resume':
            // nact keeps the state the failed message started from: loaded or not, as it was.
            return ctx.resume;
          case 'reset':
            // Back to "not loaded": the next message reloads the entity from PostgreSQL.
            entry.loaded = null;
            return ctx.reset;
          case 'stop': {
            // Out of the map first, so the next ask spawns afresh (and finds the entity gone or back);
            // what waits in the mailbox is answered now rather than left to time out.
            if (this.entries.get(id) === entry) this.entries.delete(id);
            for (const queued of ctx.mailbox as { message: Envelope<Msg> }[]) {
              if (queued.message.sender) reply(queued.message.sender, { ok: false, error });
            }
            return ctx.stop;
          }
        }
      },
    });
  }
}

/** What supervision does with an actor whose message failed: three of nact's `onCrash` decisions. */
export type SupervisionDecision = 'resume' | 'reset' | 'stop';

/**
 * A refusal is an answer: the actor keeps its state and goes on (resume). An entity that is gone
 * has nothing to reload: its actor stops. Anything else broke an invariant, so the state is not
 * trusted: it is dropped, and the next message reloads the entity from PostgreSQL (reset).
 */
export function supervisionDecision(error: unknown): SupervisionDecision {
  if (isRefusal(error)) return 'resume';
  if (error instanceof EntityGone) return 'stop';
  return 'reset';
}

/**
 * One structured line per supervision decision (`actor_supervision`): the actor's path, the
 * message type, the error and the decision. A refusal is an everyday answer (the request's own
 * line has its status): debug. A gone entity: warn. A broken invariant: error, unless the
 * database was unreachable, an outage the process logs once (runtime/database-health.ts): then
 * the reset is a debug line and the request's line has its 503.
 */
function logDecision(log: Logger, actor: string, messageType: string, error: unknown, decision: SupervisionDecision): void {
  // pino's err serializer records the class (type), message and stack of a real Error.
  const err = error instanceof Error ? error : new Error(String(error));
  const line = { event: 'actor_supervision', actor, message_type: messageType, err, decision };
  if (isRefusal(error)) log.debug({ ...line, code: error.code, details: error.details }, 'request refused; actor state kept');
  else if (error instanceof EntityGone) log.warn(line, decision === 'stop' ? 'entity gone; actor stopped' : 'entity gone; actor reset, its next load stops it');
  else if (isDatabaseUnreachable(error)) log.debug({ ...line, database_unreachable: true }, 'database unreachable; actor reset, reloads when it is back');
  else log.error(line, 'actor crashed; reset, reloads from the database');
}

/** The root of the actor tree and the per-kind registries. */
export class ActorSystem {
  private readonly root: nact.Ref<unknown>;
  private readonly registries: EntityRegistry<any, any, any>[] = [];
  private readonly sweeper: NodeJS.Timeout;
  private readonly unwatch: () => void;

  constructor(
    private readonly log: Logger,
    private readonly idleMs: number,
  ) {
    // nact names each system; left unnamed it draws a random one, so systems never collide.
    this.root = nact.start();
    this.sweeper = setInterval(() => this.registries.forEach((r) => r.stopIdle(this.idleMs)), Math.max(1000, idleMs / 2));
    this.sweeper.unref();
    this.unwatch = watchActors(() => this.registries.map((r) => r.sample()));
  }

  /** A supervisor for `behaviour.kind` and the registry that spawns its entity actors under it. */
  register<Msg extends Message, Replies extends Record<Msg['type'], unknown>, State>(
    behaviour: Behaviour<Msg, State>,
  ): EntityRegistry<Msg, Replies, State> {
    const supervisor = nact.spawnStateless(this.root as nact.Ref<any>, () => {}, behaviour.kind);
    const registry = new EntityRegistry<Msg, Replies, State>(supervisor, behaviour, this.log);
    this.registries.push(registry);
    return registry;
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.unwatch();
    nact.stop(this.root as nact.Ref<any>);
  }
}
