/**
 * Speech synthesis of the call's prepared words (the opening, the voicemail message): text in,
 * carrier audio out. Adapters: `openai-speech.ts` (OpenAI's speech endpoint with the customer's
 * voice) and `DeterministicSynthesizer` here (tones whose length follows the text, for tests and
 * machines without an OpenAI key), so what is played, and when each word of it ends, is known
 * before the call is answered.
 */
import crypto from 'node:crypto';
import { FRAME_BYTES, linearToMulaw, SAMPLE_RATE_HZ } from '../mulaw.ts';

export interface SynthesisRequest {
  text: string;
  /** BCP 47 calling language, e.g. fr-FR. */
  language: string;
  /** The customer's voice (actors/customer/call-settings.ts VOICES). */
  voice: string;
}

export interface SpeechSynthesizer {
  readonly name: 'openai' | 'deterministic';
  /** The audio of `text`: μ-law 8 kHz mono, a whole number of 20 ms frames (padded with silence). */
  synthesize(request: SynthesisRequest): Promise<Buffer>;
}

/** μ-law silence (positive zero). */
const SILENCE = 0xff;
/**
 * Time per character of text, ms: about 15 characters a second, the pace of unhurried speech, so
 * a test hears the opening take as long as a person would.
 */
export const DETERMINISTIC_MS_PER_CHARACTER = 65;

/**
 * Speaks each word as a tone (its pitch from the word, its length from its letters) with a short
 * pause after it. The same text, language and voice always give the same bytes. Pure.
 */
export class DeterministicSynthesizer implements SpeechSynthesizer {
  readonly name = 'deterministic' as const;

  async synthesize(request: SynthesisRequest): Promise<Buffer> {
    return deterministicSpeech(request);
  }
}

export function deterministicSpeech(request: SynthesisRequest): Buffer {
  const samplesPerMs = SAMPLE_RATE_HZ / 1000;
  const parts: Buffer[] = [];
  for (const word of request.text.split(/\s+/).filter(Boolean)) {
    const digest = crypto.createHash('sha256').update(`${request.voice}|${request.language}|${word}`).digest();
    const hz = 180 + (digest[0]! % 120);
    const toneSamples = Math.round(word.length * DETERMINISTIC_MS_PER_CHARACTER * samplesPerMs);
    const tone = Buffer.alloc(toneSamples);
    for (let n = 0; n < toneSamples; n++) tone[n] = linearToMulaw(0.25 * 32767 * Math.sin((2 * Math.PI * hz * n) / SAMPLE_RATE_HZ));
    parts.push(tone, Buffer.alloc(Math.round(DETERMINISTIC_MS_PER_CHARACTER * samplesPerMs), SILENCE));
  }
  return padToFrames(Buffer.concat(parts));
}

/** Pads μ-law audio with silence to a whole number of carrier frames. */
export function padToFrames(audio: Buffer): Buffer {
  const rest = audio.length % FRAME_BYTES;
  return rest === 0 ? audio : Buffer.concat([audio, Buffer.alloc(FRAME_BYTES - rest, SILENCE)]);
}
