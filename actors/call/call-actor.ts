import type { Behaviour } from '../../runtime/actor-system.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { TIME_LIMIT_SECONDS } from './outcome.ts';
import type { CallMessage } from './messages.ts';
import type { DialContext } from '../../db/admission.ts';
import { mustGetCall, releaseCall, type CallDeps, type CallLine, type CallState } from './call-state.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import { isFinished } from './views.ts';
import { createCallEnd } from './call-end.ts';
import { createCallReports } from './call-reports.ts';
import { createCallMedia } from './call-media.ts';
import { createCallTools } from './call-tools.ts';
import { OpeningNotLawful } from './opening.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { retryDelayMs } from '../../runtime/database-health.ts';
import { tickBatch } from './tick-batch.ts';

export type { CallDeps, CallState } from './call-state.ts';

/**
 * The call actor owns one call from dial to outcome: it prepares the opening and dials through
 * the carrier, plays the opening and bridges the carrier's media stream to the speech agent
 * (call-media.ts), records an opt-out and hangs up, carries out the agent's tools
 * (call-tools.ts), processes the carrier's reports (call-reports.ts), enforces the 20-minute
 * limit and writes the outcome, the charge and the events in one transaction (call-end.ts).
 * Its state is the call's live connections (call-state.ts); every fact lives in the `calls` row.
 */

const RING_TIMEOUT_SECONDS = 30;
/** A number that can go on a do-not-call list. */
const E164 = /^\+[1-9]\d{6,14}$/;
/** Margin after the carrier's own time limit before we hang up ourselves. */
const LIMIT_MARGIN_MS = 15_000;

export function callBehaviour(deps: CallDeps): Behaviour<CallMessage, CallState> & { handIn(row: CallRow): () => void } {
  const { pool, clock, log, config } = deps;
  /**
   * The live handles of this process's calls, kept beside the actors: an actor that crashes and
   * is reset reloads its call from the database and picks its handles up again from here.
   */
  const liveHandles = new Map<string, Pick<CallState, 'media' | 'bridge' | 'limitTimer' | 'line'>>();
  /**
   * The row `load` has just read, for the message that made the actor load (the dialler's `dial`
   * spawns it): that message's handler reads no second copy. Taken at the start of every message,
   * so no later one sees it.
   */
  const justLoaded = new Map<string, CallRow>();
  /**
   * Rows handed in by the dialler (`handIn`) for the dial it is about to ask: the row its claim
   * returned, which nothing has changed since (a claimed request cannot be cancelled, and its
   * admission writes other tables). The actor's load takes it instead of reading the row again.
   */
  const handedIn = new Map<string, CallRow>();
  const repo = () => createCallRepository(pool);
  // A round's calls dial side by side: their do-not-call re-checks and dial records made in one
  // turn of the event loop go in one statement each (tick-batch.ts; a failed batch runs each alone).
  const listedNow = tickBatch(
    (items: { accountId: string; e164: string }[]) => createDncRepository(pool).listedMany(items),
    (item) => createDncRepository(pool).listed(item.accountId, item.e164),
  );
  type Dialled = { id: string; carrier: string; carrier_call_id: string; from_e164: string; dialed_at: Date };
  const recordDial = tickBatch(
    (items: Dialled[]) => repo().recordDials(items).then(() => items.map(() => undefined)),
    ({ id, ...fields }) => repo().set(id, { ...fields, updated_at: fields.dialed_at } as Partial<CallRow>),
  );
  const end = createCallEnd(deps);
  const reports = createCallReports(deps, end);
  const bridging = createCallMedia(deps);
  const tools = createCallTools(deps, end, (state, reason) => optOut(state, 'tool', reason));

  /**
   * Dials: the opening is prepared first (a call never rings without it: if it cannot be, the
   * call is not dialled and ends as a carrier refusal does, nothing charged); then the agent is
   * connected while the carrier dials and the phone rings.
   */
  async function dial(state: CallState, from: string, loaded: CallRow | undefined, context: DialContext | undefined): Promise<CallState> {
    const call = loaded ?? (await mustGetCall(pool, state.id));
    // Asked again (the dialler holding a request through a database outage): never a second dial.
    if (call.dialed_at || state.line) return state;
    const carrier = deps.carriers[state.mode];
    deps.liveCalls.add(state.id);
    let line: CallLine;
    try {
      line = await bridging.prepareLine(state, call, from, context);
    } catch (err) {
      if (err instanceof OpeningNotLawful) {
        // PECR reg. 24: the address was cleared after the request was queued, and the caller ID is not freephone.
        log.info({ call_id: state.id }, 'a UK opening has neither the business address nor a freephone caller ID; the call is not dialled');
        await end.blockUndialled(state, 'registered_address_required');
        return releaseCall(deps, state);
      }
      // The database refused a read or write on the way: the dialler holds the request and asks again.
      if (isDatabaseUnreachable(err)) {
        deps.liveCalls.delete(state.id);
        throw err;
      }
      log.warn({ err, call_id: state.id }, 'the opening could not be prepared; the call is not dialled');
      return notDialled(state);
    }
    // Do-not-call is read again right before the dial (issue 23 §4): the admission was read before
    // the hold and the opening's synthesis, and a number listed since is never dialled.
    if (await listedNow({ accountId: call.account_id, e164: call.to_e164 })) {
      log.info({ call_id: state.id }, 'the number was listed do-not-call after its admission; the call is not dialled');
      await end.blockUndialled(state);
      return releaseCall(deps, state);
    }
    const lined: CallState = { ...state, line };
    bridging.openBridge(lined, line);
    let carrierCallId: string;
    try {
      const base = config.publicUrl;
      ({ carrierCallId } = await carrier.dial({
        callId: call.id,
        streamToken: deps.streamToken(call.id),
        to: call.to_e164,
        from,
        mediaUrl: deps.mediaUrl(),
        statusCallbackUrl: `${base}/telephony/twilio/status?call_id=${call.id}`,
        recordingCallbackUrl: `${base}/telephony/twilio/recording?call_id=${call.id}`,
        amdCallbackUrl: `${base}/telephony/twilio/amd?call_id=${call.id}`,
        timeLimitSeconds: TIME_LIMIT_SECONDS,
        ringTimeoutSeconds: RING_TIMEOUT_SECONDS,
      }));
    } catch (err) {
      log.warn({ err, call_id: state.id }, 'the carrier refused the call');
      return notDialled(lined);
    }
    line.carrierCallId = carrierCallId;
    const now = clock.now();
    const record = () => recordDial({ id: call.id, carrier: carrier.name, carrier_call_id: carrierCallId, from_e164: from, dialed_at: now });
    try {
      await record();
    } catch (err) {
      if (!isDatabaseUnreachable(err)) {
        log.warn({ err, call_id: state.id }, 'the dial could not be recorded; the call is not dialled');
        return notDialled(lined);
      }
      // The carrier placed the call and the phone rings: it goes on, never closed as lost or
      // dialled again; its record waits for the database (away, or its disk full).
      recordWhenPossible(state.id, carrierCallId, record);
    }
    // The carrier enforces the limit too (TimeLimit); this is the backstop if it does not.
    const timer = setTimeout(() => void deps.calls().ask(state.id, { type: 'time_limit_reached' }).catch(() => {}), TIME_LIMIT_SECONDS * 1000 + LIMIT_MARGIN_MS);
    timer.unref();
    return { ...lined, limitTimer: timer };
  }

  /**
   * The record of a call the carrier placed, written when the database takes it: tried again with
   * backoff (1 s doubling to 5 s); one line when it is refused and one when it is written.
   */
  function recordWhenPossible(callId: string, carrierCallId: string, record: () => Promise<unknown>): void {
    log.warn({ call_id: callId, carrier_call_id: carrierCallId }, 'the call was placed but the database refused its record; it is written when the database takes it');
    let failures = 1;
    const attempt = () => {
      const timer = setTimeout(() => {
        record().then(
          () => log.info({ call_id: callId, carrier_call_id: carrierCallId, attempts: failures + 1 }, 'the record of a placed call was written'),
          (err) => {
            if (!isDatabaseUnreachable(err)) return log.error({ err, call_id: callId }, 'the record of a placed call could not be written; the call keeper reconciles it');
            failures++;
            attempt();
          },
        );
      }, retryDelayMs(1_000, failures));
      timer.unref();
    };
    attempt();
  }

  /** Ends a call that was never put through: marked dialled so its hold is settled (at zero) with the outcome. */
  async function notDialled(state: CallState): Promise<CallState> {
    await repo().update(state.id, { dialed_at: clock.now() });
    await end.finish(state, { status: 'failed' });
    return releaseCall(deps, state);
  }

  /**
   * The callee opted out (a 9, or the agent's do-not-call tool): the number goes on the
   * do-not-call list and the opt-out on the compliance record at once, and the call is hung up
   * without another word (47 CFR 64.1200(b)(3): "automatically record … and immediately terminate").
   */
  async function optOut(state: CallState, via: 'dtmf' | 'tool', reason: string | null): Promise<void> {
    if (state.line) bridging.silence(state, state.line);
    const call = await mustGetCall(pool, state.id);
    const now = clock.now();
    const listIt = () => createDncRepository(pool).add({ accountId: call.account_id, e164: call.to_e164, source: 'callee_request', reason, callId: call.id, now });
    // Each write stands alone, and the call ends whatever they do: a write that fails never keeps
    // the callee on a silent line.
    // A caller without a number (an inbound call from a withheld number, "anonymous") has nothing to list.
    const listable = E164.test(call.to_e164);
    const [listed, recorded] = await Promise.allSettled([listable ? listIt() : Promise.resolve(null), createComplianceRecordRepository(pool).recordOptOut(call.id, via, now)]);
    try {
      if (call.carrier_call_id && !isFinished(call.status)) await end.hangUp(state, 'do_not_call');
    } finally {
      if (recorded.status === 'rejected') log.error({ err: recorded.reason, call_id: state.id }, 'the opt-out could not be written to the compliance record');
      if (listed.status === 'rejected') {
        // Once more after the hang-up; a number a callee asked off the list must not be lost quietly.
        await listIt().catch((err) => log.error({ err, first: listed.reason, call_id: state.id }, 'the do-not-call entry of an opt-out could not be written'));
      }
    }
  }

  async function receive(state: CallState, msg: CallMessage, loaded: CallRow | undefined): Promise<{ state: CallState; reply: unknown }> {
    switch (msg.type) {
      case 'dial':
        return { state: await dial(state, msg.from, loaded, msg.context), reply: { dialed: true } };
      case 'carrier_report_received':
        return reports.onReport(state, msg.reportId);
      case 'media_connected':
        return { state: await bridging.connectMedia(state, msg.session), reply: { bridged: true } };
      case 'bridge_connected':
        return { state: bridging.bridgeConnected(state, msg.connection), reply: { ok: true } };
      case 'bridge_failed':
        if (!bridging.bridgeFailed(state, msg.error)) return { state: { ...state, bridge: null }, reply: { ok: true } };
        log.error({ err: msg.error, call_id: state.id }, 'the speech agent failed; hanging up');
        await end.hangUp(state, 'other');
        return { state, reply: { ok: true } };
      case 'opted_out':
        await optOut(state, msg.via, 'pressed 9');
        return { state, reply: { ok: true } };
      case 'tool_called':
        return { state, reply: await tools.tool(state, msg.name, msg.args) };
      case 'transcript_heard':
        await repo().appendTranscript(state.id, { role: msg.role, text: msg.text, at: clock.now().toISOString() });
        return { state, reply: { ok: true } };
      case 'media_stopped':
        return { state: await bridging.mediaStopped(state), reply: { ok: true } };
      case 'time_limit_reached':
        await end.hangUp(state, 'time_limit');
        return { state: { ...state, limitTimer: null }, reply: { ok: true } };
      case 'get_live':
        return { state, reply: { media: state.media !== null, bridge: state.bridge !== null } };
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled call message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  return {
    kind: 'call',
    /** Hands the dialler's claimed row in for the actor's load; the returned function takes it back (the actor was loaded already). */
    handIn(row: CallRow): () => void {
      handedIn.set(row.id, row);
      return () => handedIn.delete(row.id);
    },
    async load(id) {
      const call = handedIn.get(id) ?? (await mustGetCall(pool, id));
      handedIn.delete(id);
      justLoaded.set(id, call);
      const live = liveHandles.get(id);
      return {
        id,
        accountId: call.account_id,
        mode: call.mode,
        customerId: call.customer_id,
        media: live?.media ?? null,
        bridge: live?.bridge ?? null,
        limitTimer: live?.limitTimer ?? null,
        line: live?.line ?? null,
      };
    },
    isRead: (msg) => msg.type === 'get_live',
    // A call's audio flows without messages for minutes: the actor must outlive the quiet.
    holdsLiveResources: (state) => state.media !== null || state.bridge !== null || state.limitTimer !== null || state.line !== null,
    async receive(state, msg) {
      const loaded = justLoaded.get(state.id);
      justLoaded.delete(state.id);
      const result = await receive(state, msg, loaded);
      const { media, bridge, limitTimer, line } = result.state;
      if (media || bridge || limitTimer || line) liveHandles.set(state.id, { media, bridge, limitTimer, line });
      else liveHandles.delete(state.id);
      return result;
    },
  };
}
