/**
 * Prepared speech: the audio of words the call plays itself (the opening's segments, C's
 * voicemail message), synthesized once per customer, language, voice and text and kept in
 * PostgreSQL for every process (db/opening-audio.ts), with the most used pieces in memory here.
 */
import crypto from 'node:crypto';
import type { Pool } from '../../db/pool.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Mode } from '../../runtime/types.ts';
import { createOpeningAudioRepository, type OpeningAudioKey } from '../../db/opening-audio.ts';
import { FRAME_BYTES, FRAME_MS } from '../../telephony/mulaw.ts';
import { DeterministicSynthesizer, padToFrames, type SpeechSynthesizer } from '../../telephony/speech-synthesis/synthesizer.ts';

export interface PreparedSpeech {
  /** μ-law 8 kHz frames, base64, 20 ms each: ready to send as Media Streams `media` payloads. */
  frames: string[];
  durationMs: number;
  /** sha256 (hex) of the audio. */
  sha256: string;
}

/** Pieces kept in this process's memory (an opening is about six; a few hundred customers' worth). */
export const PREPARED_SPEECH_LRU_SIZE = 2_000;

const lru = new Map<string, PreparedSpeech>();
const inFlight = new Map<string, Promise<PreparedSpeech>>();

export interface PrepareSpeechDeps {
  pool: Pool;
  clock: Clock;
  synthesizer: SpeechSynthesizer;
}

/** Test-mode calls always speak in the deterministic voice: nothing is charged, the audio is known. */
const TEST_MODE_SYNTHESIZER = new DeterministicSynthesizer();

/**
 * The audio of `text` in `voice`: from memory, else the shared cache, else synthesized and
 * stored. `mode` 'test' always uses the deterministic voice; otherwise `deps.synthesizer`.
 */
export function prepareSpeech(
  deps: PrepareSpeechDeps,
  r: { customerId: string; language: string; voice: string; text: string; mode?: Mode },
): Promise<PreparedSpeech> {
  const synthesizer = r.mode === 'test' ? TEST_MODE_SYNTHESIZER : deps.synthesizer;
  const key: OpeningAudioKey = {
    customerId: r.customerId,
    language: r.language,
    voice: r.voice,
    synthesizer: synthesizer.name,
    textSha256: sha256(Buffer.from(r.text, 'utf8')),
  };
  const id = `${key.customerId}|${key.language}|${key.voice}|${key.synthesizer}|${key.textSha256}`;
  const hit = lru.get(id);
  if (hit) {
    lru.delete(id);
    lru.set(id, hit);
    return Promise.resolve(hit);
  }
  // Two hundred calls of one customer starting together synthesize its opening once.
  const running = inFlight.get(id);
  if (running) return running;
  const work = (async () => {
    const repo = createOpeningAudioRepository(deps.pool);
    const stored = await repo.get(key);
    let audio: Buffer;
    let audioSha: string;
    if (stored) {
      audio = stored.audio;
      audioSha = stored.audio_sha256;
    } else {
      audio = padToFrames(await synthesizer.synthesize({ text: r.text, language: r.language, voice: r.voice }));
      audioSha = sha256(audio);
      await repo.put(key, audio, audioSha, deps.clock.now());
    }
    const prepared = toPrepared(audio, audioSha);
    lru.set(id, prepared);
    while (lru.size > PREPARED_SPEECH_LRU_SIZE) lru.delete(lru.keys().next().value!);
    return prepared;
  })();
  inFlight.set(id, work);
  return work.finally(() => inFlight.delete(id));
}

function toPrepared(audio: Buffer, sha: string): PreparedSpeech {
  const frames: string[] = [];
  for (let o = 0; o < audio.length; o += FRAME_BYTES) frames.push(audio.subarray(o, o + FRAME_BYTES).toString('base64'));
  return { frames, durationMs: frames.length * FRAME_MS, sha256: sha };
}

export function sha256(data: Buffer | string): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}
