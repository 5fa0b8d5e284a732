import crypto from 'node:crypto';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import type { CallRow } from '../../db/calls.ts';
import type { DialContext } from '../../db/admission.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection, BridgeHandlers } from '../../telephony/speech-bridge.ts';
import { agentSetup } from './agent-setup.ts';
import { composeOpening, calledJurisdictionOf, OPT_OUT_DIGIT } from './opening.ts';
import { openingLanguageOf } from './opening-words.ts';
import { prepareSpeech, sha256 } from './prepared-speech.ts';
import { inboundAgentSetup } from './inbound.ts';
import { scrubSuppliers } from '../shared/output-filter.ts';
import { businessName } from '../customer/views.ts';
import { callSettingsOf, registeredNameOf } from '../customer/call-settings.ts';
import { isFinished } from './views.ts';
import { dropHeld, mustGetCall, newCallLine, releaseCall, type CallDeps, type CallLine, type CallState } from './call-state.ts';
import { FRAME_MS } from '../../telephony/mulaw.ts';

/** The carrier mark placed at the end of opening segment `i`. */
const OPENING_MARK = 'opening:';
/**
 * The opening is paced by the clock of its play-out: its first 100 ms go out the instant the
 * stream starts (little work before every other stream's first frame), and a timer keeps
 * OPENING_LEAD_MS queued at the carrier ahead of what it has played, topped up every
 * OPENING_TICK_MS (the first time OPENING_FIRST_TICK_MS after the start) by at most
 * OPENING_TICK_MAX_MS at a time (so two hundred streams starting together send their leads in
 * small bursts). So a stream's start is never queued behind other streams' whole openings, an
 * event loop stalled for less than the lead is not heard, and a stop, opt-out or machine ends the
 * sending at once.
 */
const OPENING_FIRST_MS = 100;
const OPENING_FIRST_TICK_MS = 40;
const OPENING_TICK_MS = 100;
const OPENING_TICK_MAX_MS = 300;
const OPENING_LEAD_MS = 1000;
/** A pacing mark (`opening-at:<ms sent>`) goes after at least this much audio sent since the last mark of the opening. */
const PACE_MARK = 'opening-at:';
const PACE_MARK_MS = 250;
/**
 * The agent is asked for its first words this long before the opening ends: the Realtime model's
 * usual time from `response.create` to its first audio. What it says meanwhile is held until the
 * opening's last mark comes back, then sent at once, so the callee hears no silence between the
 * opening and the agent whenever the model answers within the pre-roll.
 */
export const AGENT_PREROLL_MS = 600;
/**
 * Tools that act only once the agent's held words have been heard (booking, hanging up: they
 * follow what the agent says). Every other tool acts at once: an opt-out and an objection to
 * recording must never wait, and a lookup changes nothing.
 */
const TOOLS_AFTER_WORDS: ReadonlySet<string> = new Set(['book_appointment', 'end_call']);
import { analyseWithModel, createModelAnalyst } from './call-summary.ts';
import { prospectNotesOf } from './prospect-notes.ts';
import { recordingRefused } from './recording-objection.ts';
import { observeAgentFirstAudio, secondsSince } from '../../runtime/metrics.ts';

/**
 * A call's audio (issue 23 §1). At the dial the opening is prepared (each segment its own audio,
 * so each segment's end is a carrier mark) and the agent is connected while the phone rings.
 * When the carrier's stream starts, the opening plays at once, before anything is read; the
 * callee's audio goes to the agent from the first frame; when the last segment's mark comes back
 * the agent takes over. A 9 pressed at any time opts out. What the agent says and does comes back
 * to the call actor as messages.
 */
export function createCallMedia(deps: CallDeps) {
  const { pool, clock, log } = deps;
  const self = () => deps.calls();
  const compliance = () => createComplianceRecordRepository(pool);
  const analyst = createModelAnalyst(deps.config);

  /**
   * The call's line before the dial: its opening composed and synthesized (one piece of audio a
   * segment, from the shared cache when said before) and the agent's setup. Throws when the
   * opening cannot be prepared: then the call is not dialled (OpeningNotLawful: a UK number with
   * neither the registered address nor a freephone caller ID, PECR reg. 24).
   */
  async function prepareLine(state: CallState, call: CallRow, from: string, context?: DialContext): Promise<CallLine> {
    // Handed in by the dialler when its round read them (the customer, its calling language, the
    // research notes); read here otherwise.
    const customer = context?.customer ?? (await createCustomerRepository(pool).get(call.customer_id));
    if (!customer) throw new Error(`call ${call.id}: customer ${call.customer_id} not found`);
    const language = context ? context.language : ((await createCoverageRepository(pool).get(customer.country))?.calling_language ?? 'en-US');
    const settings = callSettingsOf(customer);
    const opening = composeOpening({ registeredName: registeredNameOf(customer), registeredAddress: customer.registered_address, callbackNumber: from, to: call.to_e164, calledCountry: call.to_country, language });
    const speeches = await Promise.all(
      opening.segments.map((segment) => prepareSpeech(deps, { customerId: customer.id, language, voice: settings.voice, text: segment.text, mode: state.mode })),
    );
    const segments = opening.segments.map((segment, i) => ({ ...segment, frames: speeches[i].frames, durationMs: speeches[i].durationMs }));

    const setup = agentSetup({
      businessName: businessName(customer),
      opening: opening.text,
      website: customer.website_url,
      calledBusiness: call.business_name,
      language,
      timezone: customer.timezone,
      to: call.to_e164,
      script: customer.script,
      researchNotes: customer.research_notes,
      // What research found about the called business (actors/call/prospect-research.ts): the agent's only.
      prospectNotes: context ? context.prospectNotes : await prospectNotesOf(pool, call),
      turn: settings.turn_detection,
      voice: settings.voice,
    });
    return newCallLine(setup, { ...opening, segments, sha256: openingSha256(speeches) });
  }

  /**
   * Connects the agent (while the phone rings, or again when that failed); its audio goes to the
   * line's stream, or is held while the opening still plays (the pre-roll). Output of a connection
   * that is no longer the line's (a failed one, or one silenced by a machine) is never heard.
   */
  function openBridge(state: CallState, line: CallLine): void {
    line.bridgeStatus = 'connecting';
    line.bridgeAttempts++;
    const generation = ++line.bridgeGeneration;
    const heard = () => generation === line.bridgeGeneration && !line.optedOut && !line.closed;
    const handlers: BridgeHandlers = {
      onAudio: (payload) => {
        if (!heard()) return;
        // The model's turn latency: from its take-over (the pre-roll) to its first audio, held or not.
        if (line.takeOverAtMs) agentFirstAudio(line);
        if (line.held) line.held.push({ audio: payload });
        else line.media?.sendAudio(payload);
      },
      // Bridges that track playback ask for carrier marks (MarkingBridgeHandlers).
      onMark: (name: string) => {
        if (!heard()) return;
        if (line.held) line.held.push({ mark: name });
        else line.media?.sendMark(name);
      },
      // Over held words, the callee's speech drops them; the opening plays on (it is never cut).
      onInterrupted: () => {
        if (!heard()) return;
        if (line.held) line.held.length = 0;
        else line.media?.clear();
      },
      onToolCall: async (name, args) => {
        // Booking or ending the call waits until the agent's words before it have been heard;
        // an opt-out, an objection or a lookup acts at once.
        if (TOOLS_AFTER_WORDS.has(name)) {
          if (line.held && !(await released(line))) return { error: 'the call did not go on: nothing was said' };
          if (generation !== line.bridgeGeneration) return { error: 'the call did not go on: nothing was said' };
        }
        return self().ask(state.id, { type: 'tool_called', name, args });
      },
      // The agent speaks for the business alone: a supplier it names anyway (a model saying
      // where it comes from) is the business in the transcript the reseller and its customer
      // read. The callee's words are kept as said. The agent's held words join the transcript
      // when they are heard, after the opening.
      onTranscript: (role, text) => {
        if (role === 'callee') {
          void self().ask(state.id, { type: 'transcript_heard', role, text }).catch(() => {});
          return;
        }
        // Held words not yet heard; otherwise what the bridge reports as heard (even as it closes).
        if (line.held) {
          if (heard()) line.held.push({ transcript: text });
        } else agentTranscript(state, line, text);
      },
      onError: (error) => {
        if (generation !== line.bridgeGeneration) return;
        void self().ask(state.id, { type: 'bridge_failed', error }).catch(() => {});
      },
    };

    // Connecting runs outside the mailbox: the agent may call a tool while it connects.
    deps.bridges[state.mode]
      .connect(line.setup, handlers)
      .then(
        (connection) => self().ask(state.id, { type: 'bridge_connected', connection }),
        (error: Error) => self().ask(state.id, { type: 'bridge_failed', error }),
      )
      .catch((err) => log.error({ err, call_id: state.id }, 'bridge hand-over failed'));
  }

  /**
   * The carrier's stream started: the token is checked and the opening played at once (before
   * any await or database read), a carrier mark after each segment; the callee's audio, marks and
   * keys are wired; only then is the call's row read.
   */
  async function connectMedia(state: CallState, session: MediaSession): Promise<CallState> {
    if (!sameSecret(session.streamToken, deps.streamToken(state.id))) {
      log.warn({ call_id: state.id }, 'a media stream without this call’s stream token was refused');
      session.close();
      return state;
    }
    const line = state.line;
    // A person calling the customer's number, answered by the agent: no line was prepared at a dial.
    if (!line && !state.media) return connectInbound(state, session);
    if (!line || line.closed || line.media) {
      // A stream for a call this process did not dial (or a second stream): nothing to play to it.
      session.close();
      return state;
    }
    startStream(state, line, session);
    const call = await mustGetCall(pool, state.id);
    if (isFinished(call.status)) {
      session.close();
      return state;
    }
    return { ...state, media: session };
  }

  /** The opening plays at once; the callee's audio, marks, keys and the stream's end are wired. */
  function startStream(state: CallState, line: CallLine, session: MediaSession): void {
    line.media = session;
    line.mediaAt = performance.now();
    openingWriters.set(line, () => recordOpening(state, line));
    playOpening(state, line, session);
    session.onAudio((payload, timestampMs) => {
      // The carrier's clock, for when the agent's held words will start playing.
      if (timestampMs >= line.mediaMs) {
        line.mediaMs = timestampMs;
        line.mediaAt = performance.now();
      }
      line.bridge?.sendAudio(payload, timestampMs);
    });
    session.onMark((name) => markBack(state, line, name));
    session.onDtmf((digit) => {
      if (digit === OPT_OUT_DIGIT) optOutByKey(state, line);
    });
    session.onStop(() => void self().ask(state.id, { type: 'media_stopped' }).catch(() => {}));
  }

  /**
   * An inbound call the agent answers (actors/call/inbound.ts): its greeting ("Thank you for
   * calling …") is prepared audio like an opening, played as soon as it is ready; the agent is
   * connected meanwhile and takes over at its end. Nothing is recorded on an inbound call.
   */
  async function connectInbound(state: CallState, session: MediaSession): Promise<CallState> {
    const call = await mustGetCall(pool, state.id);
    if (call.direction !== 'inbound' || isFinished(call.status)) {
      session.close();
      return state;
    }
    const customer = await createCustomerRepository(pool).get(call.customer_id);
    if (!customer) {
      session.close();
      throw new Error(`call ${call.id}: customer ${call.customer_id} not found`);
    }
    const country = await createCoverageRepository(pool).get(customer.country);
    const language = country?.calling_language ?? 'en-US';
    const settings = callSettingsOf(customer);
    const setup = {
      ...inboundAgentSetup({ businessName: businessName(customer), website: customer.website_url, language, timezone: customer.timezone, caller: call.to_e164, script: customer.script, researchNotes: customer.research_notes }),
      turn: settings.turn_detection,
      voice: settings.voice,
    };
    const speech = await prepareSpeech(deps, { customerId: customer.id, language, voice: settings.voice, text: setup.greeting, mode: state.mode });
    const line = newCallLine(setup, {
      language: openingLanguageOf(language),
      jurisdiction: calledJurisdictionOf(call.to_e164, call.to_country),
      segments: [{ kind: 'identification', text: setup.greeting, frames: speech.frames, durationMs: speech.durationMs }],
      text: setup.greeting,
      rules: [],
      sha256: speech.sha256,
    });
    line.carrierCallId = call.carrier_call_id;
    const withLine: CallState = { ...state, line };
    openBridge(withLine, line);
    startStream(withLine, line, session);
    return { ...withLine, media: session };
  }

  /**
   * Sends the opening, a mark after each segment, paced by its play-out: the first 100 ms at once
   * (what the callee hears first), then kept OPENING_LEAD_MS (1 s) ahead of what the carrier has played:
   * by the clock (a timer tops it up), and by the carrier's own word, its marks (a pacing mark every
   * PACE_MARK_MS of audio, and each segment's), whichever is further. A carrier that plays faster
   * than real time (the simulated carrier of test mode echoes marks at once) gets it as fast as it
   * plays it. The sending ends at once when the opening stops (a machine, an opt-out, the stream's
   * end). The agent's pre-roll is timed from the opening's length.
   */
  function playOpening(state: CallState, line: CallLine, session: MediaSession): void {
    line.openingState = 'playing';
    line.openingStartedAt = clock.now();
    const segments = line.opening.segments;
    const startedAt = performance.now();
    // Where the sending is: segment `seg`, its frame `frame` (its end mark once past its frames).
    let seg = 0;
    let frame = 0;
    let sentMs = 0;
    let pacedAtMs = 0;
    const send = (untilMs: number) => {
      if (line.openingState !== 'playing' || line.closed) return;
      // A segment's mark goes with its last frame: nothing comes between two segments.
      while (seg < segments.length) {
        const frames = segments[seg]!.frames;
        if (frame < frames.length) {
          if (sentMs >= untilMs) break;
          session.sendAudio(frames[frame++]!);
          sentMs += FRAME_MS;
        } else {
          session.sendMark(`${OPENING_MARK}${seg++}`);
          frame = 0;
          pacedAtMs = sentMs;
        }
      }
      if (seg < segments.length && sentMs - pacedAtMs >= PACE_MARK_MS) {
        session.sendMark(`${PACE_MARK}${sentMs}`);
        pacedAtMs = sentMs;
      }
    };
    const tick = () => {
      line.openingTimer = null;
      send(Math.min(performance.now() - startedAt + OPENING_LEAD_MS, sentMs + OPENING_TICK_MAX_MS));
      if (seg < segments.length && line.openingState === 'playing' && !line.closed) line.openingTimer = setTimeout(tick, OPENING_TICK_MS);
    };
    openingPacers.set(line, (playedMs) => send(playedMs + OPENING_LEAD_MS));
    send(OPENING_FIRST_MS);
    if (seg < segments.length) line.openingTimer = setTimeout(tick, OPENING_FIRST_TICK_MS);
    planPreroll(state, line, segments.reduce((ms, s) => ms + s.durationMs, 0));
  }

  /** The opening ends `remainingMs` from now: the agent is asked to speak AGENT_PREROLL_MS before (at once when less is left). */
  function planPreroll(state: CallState, line: CallLine, remainingMs: number): void {
    line.openingEndsAt = performance.now() + remainingMs;
    if (line.held || line.takenOver) return;
    if (line.prerollTimer) clearTimeout(line.prerollTimer);
    line.prerollTimer = setTimeout(() => preroll(state, line), Math.max(0, remainingMs - AGENT_PREROLL_MS));
  }

  /** The pre-roll: the agent is asked for its first words now; what it says is held until the opening has played. */
  function preroll(state: CallState, line: CallLine): void {
    line.prerollTimer = null;
    if (line.openingState !== 'playing' || line.closed || line.optedOut || line.held) return;
    line.held = [];
    takeOver(state, line);
  }

  /** The carrier media time at which the opening will have played (the agent's held words start there). */
  function openingEndMediaMs(line: CallLine): number {
    return Math.max(0, Math.round(line.mediaMs + (line.openingEndsAt - line.mediaAt)));
  }

  /** The opening has played: what the agent said meanwhile goes out at once, in order, its transcript after the opening's. */
  function releaseHeld(state: CallState, line: CallLine): void {
    const held = line.held;
    line.held = null;
    if (!held) return;
    const media = line.media;
    for (const item of held) {
      if ('audio' in item) media?.sendAudio(item.audio);
      else if ('mark' in item) media?.sendMark(item.mark);
      else agentTranscript(state, line, item.transcript);
    }
    for (const wake of line.releaseWaiters.splice(0)) wake(true);
  }

  /** A line of the agent's, as heard (a supplier it names is the business: the agent speaks for it alone). */
  function agentTranscript(state: CallState, line: CallLine, text: string): void {
    void self()
      .ask(state.id, { type: 'transcript_heard', role: 'agent', text: scrubSuppliers(text, line.setup.businessName) })
      .catch(() => {});
  }

  /** A carrier mark came back: an opening segment has played to its end, prepared audio has played, or the agent's audio has. */
  function markBack(state: CallState, line: CallLine, name: string): void {
    const waiter = line.markWaiters.get(name);
    if (waiter) {
      line.markWaiters.delete(name);
      waiter();
      return;
    }
    if (name.startsWith(PACE_MARK)) {
      openingPacers.get(line)?.(Number(name.slice(PACE_MARK.length)) || 0);
      return;
    }
    if (!name.startsWith(OPENING_MARK)) {
      line.bridge?.markPlayed(name);
      return;
    }
    // Marks of audio cleared by stopOpening come back too: they were not played.
    if (line.openingState !== 'playing') return;
    const i = Number(name.slice(OPENING_MARK.length));
    const segment = line.opening.segments[i];
    if (!segment) return;
    line.played[i] = true;
    openingPacers.get(line)?.(line.opening.segments.slice(0, i + 1).reduce((ms, s) => ms + s.frames.length * FRAME_MS, 0));
    if (segment.kind === 'notice') startRecording(state, line);
    if (i === line.opening.segments.length - 1) {
      line.openingState = 'played';
      if (line.prerollTimer) clearTimeout(line.prerollTimer);
      line.prerollTimer = null;
      // The opening's line first in the transcript, then the agent's held words, sent now.
      recordOpening(state, line);
      releaseHeld(state, line);
      takeOver(state, line);
    } else {
      planPreroll(state, line, line.opening.segments.slice(i + 1).reduce((ms, s) => ms + s.durationMs, 0));
    }
  }

  /**
   * The agent speaks next: now if it is connected, as soon as it is if it is connecting, after
   * connecting again if the pre-open failed. During the pre-roll it is told when its words will
   * start playing (they are held until the opening has played).
   */
  function takeOver(state: CallState, line: CallLine): void {
    if (line.closed || line.optedOut) return;
    line.wantTakeOver = true;
    if (line.bridge) {
      if (line.takenOver) return;
      line.takeOverAtMs = performance.now();
      line.takenOver = true;
      line.bridge.takeOver(line.held ? { startsAtMediaMs: openingEndMediaMs(line) } : undefined);
    } else if (line.bridgeStatus === 'failed') {
      openBridge(state, line);
    }
  }

  /** Recording starts only once the recording notice has been played (issue 23 §6). */
  function startRecording(state: CallState, line: CallLine): void {
    const carrierCallId = line.carrierCallId;
    if (!carrierCallId) return;
    const url = `${deps.config.publicUrl}/telephony/twilio/recording?call_id=${state.id}`;
    const carrier = deps.carriers[state.mode];
    void (async () => {
      // The callee objected during the opening (recording-objection.ts): it never starts.
      if (await recordingRefused(pool, state.id)) return;
      await carrier.startRecording(carrierCallId, url);
      // An objection that landed while the carrier started it stops it again.
      if (await recordingRefused(pool, state.id)) {
        await carrier.stopRecording(carrierCallId);
        return;
      }
      await compliance().recordRecordingStarted(state.id, clock.now());
    })().catch((err) => log.warn({ err, call_id: state.id }, 'the recording could not be started'));
  }

  /** Writes the opening as played (once) and its played words as the transcript's first agent line. */
  function recordOpening(state: CallState, line: CallLine): void {
    const startedAt = line.openingStartedAt;
    if (!startedAt || line.openingRecorded) return;
    line.openingRecorded = true;
    const segments = line.opening.segments.map((s, i) => ({ kind: s.kind, text: s.text, played: line.played[i]! }));
    const heard = segments.filter((s) => s.played).map((s) => s.text).join(' ');
    const o = line.opening;
    compliance()
      .recordOpening(state.id, { segments, rules: o.rules, text: o.text, audioSha256: o.sha256, language: o.language, startedAt })
      .catch((err) => log.error({ err, call_id: state.id }, 'the opening could not be written to the compliance record'));
    if (heard) void self().ask(state.id, { type: 'transcript_heard', role: 'agent', text: heard }).catch(() => {});
  }

  /** A 9 pressed: nothing more is said (the opening and the agent stop now), the call actor records it and hangs up. */
  function optOutByKey(state: CallState, line: CallLine): void {
    if (line.optedOut || line.closed) return;
    silence(state, line);
    void self().ask(state.id, { type: 'opted_out', via: 'dtmf' }).catch((err) => log.error({ err, call_id: state.id }, 'an opt-out by key could not be processed'));
  }

  /** Stops everything the callee would hear next: the opening, prepared audio, the agent. */
  function silence(state: CallState, line: CallLine): void {
    line.optedOut = true;
    dropHeld(line);
    if (line.openingState === 'playing') {
      line.openingState = 'stopped';
      recordOpening(state, line);
    }
    line.media?.clear();
    line.bridge?.close();
    line.bridge = null;
  }

  /** The agent is connected: it takes over now if the opening has already played. */
  function bridgeConnected(state: CallState, connection: BridgeConnection): CallState {
    const line = state.line;
    if (!line || line.closed || line.optedOut) {
      connection.close();
      return state;
    }
    line.bridge = connection;
    line.bridgeStatus = 'connected';
    if (line.wantTakeOver) takeOver(state, line);
    return { ...state, bridge: connection };
  }

  /**
   * The agent failed. Before it has spoken, once: the opening plays on and the agent is connected
   * again at its end. Otherwise the call cannot go on: true (hang up).
   */
  function bridgeFailed(state: CallState, error: Error): boolean {
    const line = state.line;
    if (!line || line.closed || line.optedOut) return false;
    line.bridge = null;
    line.bridgeStatus = 'failed';
    // Failed during the pre-roll: its held words are never heard; the agent has not spoken yet.
    const unheard = !line.takenOver || line.held !== null;
    if (line.held) {
      line.held.length = 0;
      line.takenOver = false;
    }
    if (unheard && line.bridgeAttempts < 2) {
      log.warn({ err: error, call_id: state.id }, 'the speech agent failed before it spoke; connecting again (at once if it is wanted, else when the opening ends)');
      if (line.wantTakeOver) openBridge(state, line);
      return false;
    }
    dropHeld(line);
    return true;
  }

  /** The carrier's stream stopped: the agent is closed; the call is released here once its end is written. */
  async function mediaStopped(state: CallState): Promise<CallState> {
    deps.mediaStopped?.(state.id);
    const line = state.line;
    if (line) dropHeld(line);
    if (line && line.openingState !== 'waiting') {
      if (line.openingState === 'playing') line.openingState = 'stopped';
      recordOpening(state, line);
    }
    state.bridge?.close();
    if (line) {
      line.bridge = null;
      line.media = null;
    }
    // Another process may have written the end (the carrier's report reached its API):
    // then nothing is left to wait for here.
    const call = await mustGetCall(pool, state.id);
    // The model reads a live call's transcript now, before the end is written (call-summary.ts; bounded, never fails the stop).
    if (!isFinished(call.status) && state.mode === 'live') await analyseWithModel(pool, analyst, call, clock.now(), log).catch((err) => log.warn({ err, call_id: state.id }, 'call analysis failed'));
    const ended = isFinished(call.status);
    return ended ? releaseCall(deps, state) : { ...state, bridge: null, media: null };
  }

  return { prepareLine, openBridge, connectMedia, bridgeConnected, bridgeFailed, mediaStopped, silence };
}

/** The agent's first audio after its take-over: the turn latency the callee waits through. */
function agentFirstAudio(line: CallLine): void {
  observeAgentFirstAudio(secondsSince(line.takeOverAtMs!));
  line.takeOverAtMs = undefined;
}

/** Per line with a stream: writes what was played of its opening (once; call-media's `recordOpening`). */
const openingWriters = new WeakMap<CallLine, () => void>();
/** Per line playing its opening: the carrier has played this many ms of it, send more (call-media's `playOpening`). */
const openingPacers = new WeakMap<CallLine, (playedMs: number) => void>();

/**
 * Stops the opening now (a machine answered, machines.ts): the carrier drops what it has not
 * played, and the agent does not take over. What was played is written now (compliance record,
 * transcript), so the transcript's first agent line is the opening, before a voicemail message.
 */
export function stopOpening(state: CallState): void {
  const line = state.line;
  if (!line || line.openingState !== 'playing') return;
  line.openingState = 'stopped';
  line.wantTakeOver = false;
  // The agent's words asked for at the pre-roll, and any still coming, never reach the machine.
  dropHeld(line);
  line.bridgeGeneration++;
  line.media?.clear();
  openingWriters.get(line)?.();
}

/** Resolves true once the agent's held words have gone to the carrier, false if they never will. */
function released(line: CallLine): Promise<boolean> {
  if (!line.held) return Promise.resolve(true);
  return new Promise((resolve) => line.releaseWaiters.push(resolve));
}

/**
 * Plays prepared audio (the voicemail message, prepared-speech.ts) on the call's stream, with the
 * carrier mark `markName` after it; resolves once that mark comes back (it has been played), or
 * at once when the call has no stream, or when the call ends here first.
 */
export function playPrepared(state: CallState, frames: string[], markName: string): Promise<void> {
  const line = state.line;
  const media = line?.media;
  // After an opt-out nothing more is said (it may have come while this audio was prepared).
  if (!line || !media || line.closed || line.optedOut) return Promise.resolve();
  return new Promise((resolve) => {
    line.markWaiters.set(markName, resolve);
    for (const frame of frames) media.sendAudio(frame);
    media.sendMark(markName);
  });
}

function sameSecret(given: string | null, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The sha256 of an opening's audio (its segments' frames, decoded and joined) by its segments' own hashes: at most this many kept. */
const OPENING_SHAS = 2_000;
const openingShas = new Map<string, string>();

/**
 * The sha256 of the opening's whole audio. Segments are the prepared speech (prepared-speech.ts),
 * each with the hash of its own audio; calls of one customer share the same few segments, so
 * the joined audio is decoded and hashed once per combination rather than once per call.
 */
function openingSha256(speeches: readonly { frames: string[]; sha256: string }[]): string {
  const key = speeches.map((s) => `${s.sha256}:${s.frames.length}`).join('|');
  const kept = openingShas.get(key);
  if (kept) return kept;
  const sha = sha256(Buffer.concat(speeches.flatMap((s) => s.frames.map((f) => Buffer.from(f, 'base64')))));
  openingShas.set(key, sha);
  if (openingShas.size > OPENING_SHAS) openingShas.delete(openingShas.keys().next().value!);
  return sha;
}
