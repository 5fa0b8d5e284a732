import type { Queryable } from './pool.ts';

/** One piece of prepared speech's audio (table opening_audio, migration 039). */
export interface OpeningAudioKey {
  customerId: string;
  language: string;
  voice: string;
  /** The synthesizer's name: audio of one never stands in for another's. */
  synthesizer: string;
  textSha256: string;
}

export function createOpeningAudioRepository(db: Queryable) {
  return {
    async get(k: OpeningAudioKey): Promise<{ audio: Buffer; audio_sha256: string } | null> {
      const { rows } = await db.query(
        `SELECT audio, audio_sha256 FROM opening_audio
          WHERE customer_id = $1 AND language = $2 AND voice = $3 AND synthesizer = $4 AND text_sha256 = $5`,
        [k.customerId, k.language, k.voice, k.synthesizer, k.textSha256],
      );
      return rows[0] ?? null;
    },

    /** Stores the audio; a process that synthesized the same text first keeps its row. */
    async put(k: OpeningAudioKey, audio: Buffer, audioSha256: string, now: Date): Promise<void> {
      await db.query(
        `INSERT INTO opening_audio (customer_id, language, voice, synthesizer, text_sha256, audio, audio_sha256, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [k.customerId, k.language, k.voice, k.synthesizer, k.textSha256, audio, audioSha256, now],
      );
    },
  };
}
