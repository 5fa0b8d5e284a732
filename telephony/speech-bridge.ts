/**
 * The speech-to-speech agent a call is bridged to. Adapters: `openai-realtime/` (OpenAI Realtime
 * over WebSocket, μ-law in and out without transcoding) and `scripted/` (plays a scripted
 * conversation for test mode and machines without an OpenAI key).
 */

/** How the agent takes turns (the customer's `call_settings.turn_detection`, docs/api.md). */
export interface TurnSettings {
  /** Silence that ends the callee's turn, ms. */
  silence_ms: number;
  /** Voice activity threshold, 0.3 (sensitive) to 0.9 (only clear speech). */
  threshold: number;
  /** Audio kept before detected speech, ms. */
  prefix_padding_ms: number;
  /**
   * Speech over the agent that stops within this many ms ("mm-hm", "okay") is a backchannel: the
   * agent pauses and carries on from where it paused. Longer speech interrupts it. 0: every sound
   * interrupts.
   */
  backchannel_max_ms: number;
}

/** A function the agent may call. Parameters are a JSON Schema object. */
export interface ToolSpec {
  name: 'find_free_slots' | 'book_appointment' | 'end_call' | 'mark_do_not_call' | 'recording_objection';
  description: string;
  parameters: Record<string, unknown>;
}

export interface AgentSetup {
  /** Everything the agent is told: who it calls for, how to behave, the certified script. */
  instructions: string;
  /** The business the agent calls for, by the name it goes by (never a placeholder). */
  businessName: string;
  /**
   * The opening the callee hears first: prepared audio the call plays the instant the stream
   * starts (actors/call/opening.ts), not the model's words. The bridge puts this text in the
   * conversation as the agent's first turn, so the model continues from it after `takeOver()`.
   */
  greeting: string;
  /** The customer's turn-taking settings (actors/customer/call-settings.ts); absent: the defaults there. */
  turn?: TurnSettings;
  /** The customer's voice; absent: the bridge's default. */
  voice?: string;
  tools: ToolSpec[];
  /** BCP 47 calling language, e.g. en-GB. */
  language: string;
  /** Called number, E.164 (the scripted bridge picks its scenario from it). */
  to: string;
  /** The customer's time zone (IANA), the zone appointments are agreed in. */
  timezone: string;
}

/** What the bridge reports to the call while it runs. */
export interface BridgeHandlers {
  /** Agent audio, μ-law base64, to play to the callee. */
  onAudio(payloadBase64: string): void;
  /** The callee started speaking over the agent: drop buffered agent audio. */
  onInterrupted(): void;
  /** The agent calls a tool; the resolved value goes back to the model as the function output. */
  onToolCall(name: string, args: Record<string, unknown>): Promise<unknown>;
  /** A finished utterance, for the transcript. */
  onTranscript(role: 'agent' | 'callee', text: string): void;
  /** The bridge failed or its peer went away. */
  onError(error: Error): void;
  /**
   * Asks the caller to place a carrier mark named `name` right after the audio just given; its
   * echo comes back through `markPlayed`, so the bridge knows how much the callee heard.
   */
  onMark?(name: string): void;
}

/** How the agent's first words will be played (`BridgeConnection.takeOver`). */
export interface TakeOverOptions {
  /**
   * The call asks for the agent's first words a little before the opening ends (its pre-roll,
   * actors/call/call-media.ts) and holds them until the opening has played: they start playing at
   * this carrier media time (ms since the stream began, the clock of `sendAudio`'s timestamps),
   * not when they are given. Absent: as soon as given. A bridge that tracks what was played
   * (barge-in, truncation) counts from here.
   */
  startsAtMediaMs?: number;
}

export interface BridgeConnection {
  /**
   * The agent speaks next: the opening has played, is about to end (the call holds what the agent
   * says until it has: `options.startsAtMediaMs`), or was cut short. A bridge is connected while
   * the phone rings and says nothing before this; calling it twice does nothing.
   */
  takeOver(options?: TakeOverOptions): void;
  /** Callee audio (μ-law base64) with the carrier's media timestamp, ms since the stream began. */
  sendAudio(payloadBase64: string, timestampMs: number): void;
  /** A mark we sent came back from the carrier (that much agent audio has been played). */
  markPlayed(name: string): void;
  close(): void;
}

export interface SpeechBridge {
  readonly name: 'openai-realtime' | 'scripted';
  /** Opens a session (while the phone rings); the agent speaks after `takeOver()`. */
  connect(setup: AgentSetup, handlers: BridgeHandlers): Promise<BridgeConnection>;
}
