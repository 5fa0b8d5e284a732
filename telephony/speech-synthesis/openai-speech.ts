/**
 * SpeechSynthesizer adapter for OpenAI's speech endpoint (`POST /v1/audio/speech`, the `openai`
 * SDK's `audio.speech.create`): model `gpt-4o-mini-tts`, the customer's voice, told the calling
 * language, `response_format: 'pcm'` (raw 24 kHz 16-bit little-endian mono), which is low-pass
 * filtered, taken down to 8 kHz and μ-law encoded for the carrier.
 */
import OpenAI from 'openai';
import { linearToMulaw } from '../mulaw.ts';
import { padToFrames, type SpeechSynthesizer, type SynthesisRequest } from './synthesizer.ts';

export const OPENAI_SPEECH_MODEL = 'gpt-4o-mini-tts';
/** The sample rate of the endpoint's `pcm` format. */
export const OPENAI_PCM_RATE_HZ = 24_000;
/** The endpoint's longest input, characters. */
export const OPENAI_SPEECH_MAX_INPUT = 4096;
const SPEECH_TIMEOUT_MS = 15_000;
const SPEECH_MAX_RETRIES = 2;

export interface OpenAISpeechOptions {
  apiKey: string;
  /** The API's base URL including `/v1` (a fake's in tests); the SDK's default otherwise. */
  baseUrl?: string;
  model?: string;
  timeoutMs?: number;
  maxRetries?: number;
}

export class OpenAISpeechSynthesizer implements SpeechSynthesizer {
  readonly name = 'openai' as const;
  private readonly client: OpenAI;
  private readonly model: string;

  constructor(opts: OpenAISpeechOptions) {
    this.client = new OpenAI({ apiKey: opts.apiKey, baseURL: opts.baseUrl, timeout: opts.timeoutMs ?? SPEECH_TIMEOUT_MS, maxRetries: opts.maxRetries ?? SPEECH_MAX_RETRIES });
    this.model = opts.model ?? OPENAI_SPEECH_MODEL;
  }

  async synthesize(request: SynthesisRequest): Promise<Buffer> {
    if (request.text.length > OPENAI_SPEECH_MAX_INPUT) throw new Error(`speech text longer than ${OPENAI_SPEECH_MAX_INPUT} characters`);
    const language = languageName(request.language);
    const response = await this.client.audio.speech.create({
      model: this.model,
      voice: request.voice,
      input: request.text,
      instructions: `Speak ${language} (${request.language}) clearly, warmly and at an unhurried pace, as on a business telephone call.`,
      response_format: 'pcm',
    });
    const pcm = Buffer.from(await response.arrayBuffer());
    if (pcm.length < 2) throw new Error('the speech endpoint returned no audio');
    return padToFrames(pcm24kToMulaw8k(pcm));
  }
}

/** Low-pass FIR (windowed sinc, cut-off 3.4 kHz at 24 kHz) applied before keeping every third sample. */
const TAPS = (() => {
  const n = 31;
  const fc = 3400 / OPENAI_PCM_RATE_HZ;
  const taps: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = i - (n - 1) / 2;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const hamming = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (n - 1));
    taps.push(sinc * hamming);
  }
  const sum = taps.reduce((a, b) => a + b, 0);
  return taps.map((t) => t / sum);
})();

/** 24 kHz s16le mono PCM to 8 kHz μ-law (an odd trailing byte is dropped). Pure. */
export function pcm24kToMulaw8k(pcm: Buffer): Buffer {
  const samples = Math.floor(pcm.length / 2);
  const at = (i: number) => (i < 0 || i >= samples ? 0 : pcm.readInt16LE(i * 2));
  const half = (TAPS.length - 1) / 2;
  const out = Buffer.alloc(Math.floor(samples / 3));
  for (let o = 0; o < out.length; o++) {
    const centre = o * 3;
    let acc = 0;
    for (let k = 0; k < TAPS.length; k++) acc += TAPS[k]! * at(centre + k - half);
    out[o] = linearToMulaw(acc);
  }
  return out;
}

/** The language's English name for the speech instructions (fr-FR → French); the tag itself when unknown. */
function languageName(tag: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(tag.split('-')[0] ?? tag) ?? tag;
  } catch {
    return tag;
  }
}
