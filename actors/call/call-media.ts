import crypto from 'node:crypto';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection } from '../../telephony/speech-bridge.ts';
import { agentSetup, identificationOf } from './agent-setup.ts';
import { scrubSuppliers } from '../shared/output-filter.ts';
import { businessName } from '../customer/views.ts';
import { isFinished } from './views.ts';
import { mustGetCall, releaseCall, type CallDeps, type CallState } from './call-state.ts';
import { analyseWithModel, createModelAnalyst } from './call-summary.ts';

/**
 * A call's audio: the carrier's media stream is checked against the call's stream token, the
 * speech agent is started for it, and audio, marks and barge-in flow directly between the two;
 * what the agent says and does comes back to the call actor as messages.
 */
export function createCallMedia(deps: CallDeps) {
  const { pool, clock, log } = deps;
  const analyst = createModelAnalyst(deps.config);

  /** Starts the agent for a connected media stream; audio flows directly between the two. */
  async function connectMedia(state: CallState, session: MediaSession): Promise<CallState> {
    if (!sameSecret(session.streamToken, deps.streamToken(state.id))) {
      log.warn({ call_id: state.id }, 'a media stream without this call’s stream token was refused');
      session.close();
      return state;
    }
    const call = await mustGetCall(pool, state.id);
    if (isFinished(call.status)) {
      session.close();
      return state;
    }
    const customer = await createCustomerRepository(pool).get(call.customer_id);
    if (!customer) {
      // A call row references its customer (foreign key): a broken invariant, never a nameless agent.
      session.close();
      throw new Error(`call ${call.id}: customer ${call.customer_id} not found`);
    }
    const country = await createCoverageRepository(pool).get(customer.country);
    const setup = agentSetup({
      businessName: businessName(customer),
      callbackNumber: call.from_e164,
      website: customer.website_url,
      calledBusiness: call.business_name,
      language: country?.calling_language ?? 'en-US',
      timezone: customer.timezone,
      to: call.to_e164,
      script: customer.script,
      researchNotes: customer.research_notes,
    });
    const { identification, optOutOffered } = identificationOf(setup);
    await createComplianceRecordRepository(pool).recordIdentification(call.id, identification, optOutOffered, clock.now());
    const self = () => deps.calls();
    const bridgeFor = deps.bridges[state.mode];
    // Connecting runs outside the mailbox: the agent may call a tool while it connects.
    bridgeFor
      .connect(setup, {
        onAudio: (payload) => session.sendAudio(payload),
        // Bridges that track playback ask for carrier marks (MarkingBridgeHandlers).
        onMark: (name: string) => session.sendMark(name),
        onInterrupted: () => session.clear(),
        onToolCall: (name, args) => self().ask(state.id, { type: 'tool_called', name, args }),
        // The agent speaks for the business alone: a supplier it names anyway (a model saying
        // where it comes from) is the business in the transcript the reseller and its customer
        // read. The callee's words are kept as said.
        onTranscript: (role, text) =>
          void self()
            .ask(state.id, { type: 'transcript_heard', role, text: role === 'agent' ? scrubSuppliers(text, setup.businessName) : text })
            .catch(() => {}),
        onError: (error) => void self().ask(state.id, { type: 'bridge_failed', error }).catch(() => {}),
      })
      .then(
        (connection) => self().ask(state.id, { type: 'bridge_connected', connection }),
        (error: Error) => self().ask(state.id, { type: 'bridge_failed', error }),
      )
      .catch((err) => log.error({ err, call_id: state.id }, 'bridge hand-over failed'));
    session.onStop(() => void self().ask(state.id, { type: 'media_stopped' }).catch(() => {}));
    return { ...state, media: session };
  }

  /** The agent is connected: the caller's audio and the carrier's played marks go to it. */
  function bridgeConnected(state: CallState, connection: BridgeConnection): CallState {
    const media = state.media;
    if (!media) {
      connection.close();
      return state;
    }
    media.onAudio((payload, timestampMs) => connection.sendAudio(payload, timestampMs));
    media.onMark((name) => connection.markPlayed(name));
    return { ...state, bridge: connection };
  }

  /** The carrier's stream stopped: the agent is closed; the call is released here once its end is written. */
  async function mediaStopped(state: CallState): Promise<CallState> {
    deps.mediaStopped?.(state.id);
    state.bridge?.close();
    // Another process may have written the end (the carrier's report reached its API):
    // then nothing is left to wait for here.
    const call = await mustGetCall(pool, state.id);
    // The model reads a live call's transcript now, before the end is written (call-summary.ts; bounded, never fails the stop).
    if (!isFinished(call.status) && state.mode === 'live') await analyseWithModel(pool, analyst, call, clock.now(), log).catch((err) => log.warn({ err, call_id: state.id }, 'call analysis failed'));
    const ended = isFinished(call.status);
    return ended ? releaseCall(deps, state) : { ...state, bridge: null, media: null };
  }

  return { connectMedia, bridgeConnected, mediaStopped };
}

function sameSecret(given: string | null, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
