/**
 * One carrier media stream as the call actor sees it (Twilio Media Streams protocol: the carrier
 * sends `connected`, `start`, `media`, `mark`, `dtmf`, `stop`; we send `media`, `mark`, `clear`). Audio
 * is μ-law 8 kHz mono, base64, 20 ms (160 bytes) per frame.
 */
export interface MediaSession {
  readonly streamSid: string;
  /** Our call id, from `start.customParameters.call_id`. */
  readonly callId: string;
  /** The per-call secret from `start.customParameters.stream_token`, proving the stream is the one we asked for. */
  readonly streamToken: string | null;
  /** Plays agent audio to the callee. */
  sendAudio(payloadBase64: string): void;
  /** Asks the carrier to echo `name` once everything sent before it has played. */
  sendMark(name: string): void;
  /** Drops agent audio the carrier has buffered but not yet played (barge-in). */
  clear(): void;
  /** Closes the WebSocket (the carrier then ends the stream). */
  close(): void;
  onAudio(handler: (payloadBase64: string, timestampMs: number) => void): void;
  onMark(handler: (name: string) => void): void;
  /** A key the callee pressed (Media Streams `dtmf` event, bidirectional streams): `0`–`9`, `*`, `#`. */
  onDtmf(handler: (digit: string) => void): void;
  onStop(handler: () => void): void;
}
