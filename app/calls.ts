import type { Deps } from '../runtime/deps.ts';
import type { ActorSystem, EntityRegistry } from '../runtime/actor-system.ts';
import type { SecretBox } from '../runtime/secret-box.ts';
import type { Mode } from '../runtime/types.ts';
import type { AccountRegistry } from '../http/routes/deps.ts';
import { callBehaviour, type CallState } from '../actors/call/call-actor.ts';
import type { CallMessage, CallReplies } from '../actors/call/messages.ts';
import { createCallRequests, type CallRequests } from '../actors/call/requests.ts';
import type { CustomerDirectory } from '../actors/customer/customer-directory.ts';
import type { MoneyWriter } from '../money/writer.ts';
import { createCarrierInbox, type CarrierInbox } from '../actors/call/carrier-inbox.ts';
import { createInbound, type Inbound } from '../actors/call/inbound.ts';
import { CallKeeper } from '../actors/call/call-keeper.ts';
import { Dialler } from '../actors/scheduler/dialler.ts';
import { createConsentGate } from '../actors/scheduler/consent-gate.ts';
import { createLineTypeLookup } from '../actors/call/line-types.ts';
import type { CallerIdValidationReport, CallerIdValidationRequest, Carrier } from '../telephony/carrier.ts';
import { startMediaServer } from '../telephony/media-server.ts';
import { SimulatedCarrier } from '../telephony/simulated/simulated-carrier.ts';
import { TwilioCarrier } from '../telephony/twilio/twilio-carrier.ts';
import { UnconfiguredCarrier } from '../telephony/unconfigured-carrier.ts';
import { liveCarrierKind } from '../runtime/config.ts';
import { ScriptedBridge } from '../telephony/scripted/scripted-bridge.ts';
import { OpenAIRealtimeBridge } from '../telephony/openai-realtime/openai-realtime-bridge.ts';
import { decideRetry } from '../actors/scheduler/retry-rules.ts';
import { createCalendarOpener } from '../calendars/open-calendar.ts';
import { OpenAISpeechSynthesizer } from '../telephony/speech-synthesis/openai-speech.ts';
import { DeterministicSynthesizer } from '../telephony/speech-synthesis/synthesizer.ts';

export type CallRegistry = EntityRegistry<CallMessage, CallReplies, CallState>;

/** The call side of the service, wired: actors, carriers and agents per mode, and the loops that drive calls. */
export interface CallWiring {
  calls: CallRegistry;
  callRequests: CallRequests;
  carriers: Record<Mode, Carrier>;
  /** Where the carrier's reports land first (stored, then processed, retried until they are). */
  carrierInbox: CarrierInbox;
  /** Started by the dialler role only (app/start.ts). */
  dialler: Dialler;
  keeper: CallKeeper;
  /** Where the carrier streams a call's audio: empty in a process that runs no media server. */
  mediaUrl: () => string;
  /** Calls people make to customers' numbers (their voice webhook). */
  inbound: Inbound;
}

/**
 * Wires calls: carriers and agents per mode, the call actors, the carrier inbox, the media server
 * (dialler role) and the dialler and call keeper (constructed here, started by the caller).
 * `onStop` registers a shutdown step; steps run in reverse order of registration.
 */
export async function composeCalls(
  deps: Deps,
  actors: ActorSystem,
  parts: {
    accounts: AccountRegistry;
    secrets: SecretBox;
    customerDirectory: CustomerDirectory;
    money: MoneyWriter;
    /** Where the test-mode carrier's caller ID verifications report (the numbers room). */
    onCallerIdValidation: (report: CallerIdValidationReport, request: CallerIdValidationRequest) => void;
  },
  onStop: (name: string, fn: () => unknown) => void,
): Promise<CallWiring> {
  const { config, log, clock } = deps;
  let calls: CallRegistry | undefined;
  const callsRef = () => calls!;
  const handOver = (ask: () => Promise<unknown>) => void ask().catch((err) => log.error({ err }, 'a media stream could not be handed to its call'));
  // What the carrier reports is stored first and processed after (the inbox); the simulated
  // carrier reports in-process, so its reports wait in memory while the database is away.
  const inbox = createCarrierInbox({ ...deps, calls: callsRef });
  onStop('carrier inbox', () => inbox.stop());
  // Test mode never reaches a carrier; live mode uses Twilio when configured, the simulated
  // carrier only where a development set-up asked for it, and otherwise none (everything refused).
  const simulated = new SimulatedCarrier({
    log,
    onStatus: (r) => inbox.receiveLocal({ kind: 'status', report: r }),
    onRecording: (r) => inbox.receiveLocal({ kind: 'recording', report: r }),
    onAmd: (r) => inbox.receiveLocal({ kind: 'amd', report: r }),
    talkUntilLimitMs: config.simulatedTalkMs,
    ringMs: config.simulatedRingMs,
    onCallerIdValidation: parts.onCallerIdValidation,
  });
  const scripted = new ScriptedBridge({ clock, log });
  const liveKind = liveCarrierKind(config);
  const liveCarrier: Carrier = config.twilio ? new TwilioCarrier({ ...config.twilio, log }) : liveKind === 'simulated' ? simulated : new UnconfiguredCarrier();
  const liveBridge = config.openai
    ? new OpenAIRealtimeBridge({ apiKey: config.openai.apiKey, baseUrl: config.openai.realtimeUrl, model: config.openai.realtimeModel, log })
    : scripted;
  // The opening's voice for live calls: the customer's OpenAI voice when a key is configured
  // (test-mode calls always use the deterministic voice: actors/call/prepared-speech.ts).
  const synthesizer = config.openai ? new OpenAISpeechSynthesizer({ apiKey: config.openai.apiKey, baseUrl: config.openai.baseUrl }) : new DeterministicSynthesizer();
  if (!liveKind) {
    log.warn('no carrier is configured: live numbers and live calls are refused (set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN)');
  } else if (!config.twilio || !config.openai) {
    log.warn(
      { carrier: liveCarrier.name, agent: liveBridge.name },
      'live-mode calls are simulated where credentials are missing (set TWILIO_ACCOUNT_SID/TWILIO_AUTH_TOKEN and OPENAI_API_KEY)',
    );
  }
  const carriers: Record<Mode, Carrier> = { test: simulated, live: liveCarrier };
  const liveCalls = new Set<string>();
  const streamToken = (callId: string) => parts.secrets.mac('media-stream', callId);
  let mediaUrl = config.mediaUrl ?? '';
  let keeper: CallKeeper | undefined;
  const behaviour = callBehaviour({
    ...deps,
    money: parts.money,
    carriers,
    bridges: { test: scripted, live: liveBridge },
    synthesizer,
    mediaUrl: () => mediaUrl,
    liveCalls,
    calls: callsRef,
    streamToken,
    mediaStopped: (callId) => keeper?.mediaStopped(callId),
    decideRetry,
    calendars: createCalendarOpener(deps),
    secrets: parts.secrets,
  });
  calls = actors.register<CallMessage, CallReplies, CallState>(behaviour);
  // The media server lives where calls are dialled: the carrier streams to the process that holds the call.
  if (config.roles.has('dialler')) {
    const media = await startMediaServer({
      host: config.host,
      port: config.mediaPort,
      log,
      onSession: (session) => handOver(() => callsRef().ask(session.callId, { type: 'media_connected', session })),
    });
    onStop('media server', () => media.close());
    if (!config.mediaUrl) {
      const origin = new URL(config.publicUrl);
      mediaUrl = `${origin.protocol === 'https:' ? 'wss' : 'ws'}://${origin.hostname}:${media.port}/media`;
    }
  }
  const dialler = new Dialler({ ...deps, money: parts.money, accounts: parts.accounts, calls, liveCalls, handInCall: (row) => behaviour.handIn(row) }, { maxCalls: config.maxCallsPerProcess, pollMs: config.diallerPollMs, batch: 200 });
  keeper = new CallKeeper({ ...deps, money: parts.money, owner: dialler.id, carriers, inbox }, { pollMs: config.keeperPollMs });
  // Held inbound calls are leased to this process only where its keeper runs (the dialler role).
  const inbound = createInbound({ ...deps, accounts: parts.accounts, owner: config.roles.has('dialler') ? dialler.id : null, streamToken, mediaUrl: () => mediaUrl });
  return { calls, callRequests: createCallRequests(deps, parts.customerDirectory, createConsentGate(createLineTypeLookup(deps.pool, carriers, log))), carriers, carrierInbox: inbox, dialler, keeper, mediaUrl: () => mediaUrl, inbound };
}
