/**
 * G.711 μ-law helpers for the 8 kHz mono audio the carrier and the agent exchange. Calls pass
 * μ-law through untouched; these exist for simulated speech (tones), recordings (WAV) and tests.
 * Pure.
 */

/** Samples per second of carrier audio. */
export const SAMPLE_RATE_HZ = 8000;
/** Length of one carrier media frame, ms. */
export const FRAME_MS = 20;
/** Bytes in one frame: one μ-law byte per sample. */
export const FRAME_BYTES = (SAMPLE_RATE_HZ * FRAME_MS) / 1000;
/** 0xFF is μ-law for 0 (positive zero), so this is a frame of silence, base64. */
export const SILENCE_FRAME_BASE64 = Buffer.alloc(FRAME_BYTES, 0xff).toString('base64');

const BIAS = 0x84;
const CLIP = 32635;

/** Encodes one 16-bit linear PCM sample (clamped to ±32,767) as a μ-law byte. */
export function linearToMulaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s = Math.min(s, CLIP) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Decodes one μ-law byte to a 16-bit linear PCM sample. */
export function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

/**
 * A sine tone as μ-law frames, base64 (the form media messages carry). The phase runs on across
 * frames so there is no click at frame edges; the last frame is padded to a whole frame.
 * `amplitude` is a fraction of full scale.
 */
export function toneFrames(ms: number, hz: number, amplitude = 0.3): string[] {
  const count = Math.max(0, Math.ceil(ms / FRAME_MS));
  const peak = Math.max(0, Math.min(1, amplitude)) * 32767;
  const frames: string[] = [];
  for (let f = 0; f < count; f++) {
    const frame = Buffer.alloc(FRAME_BYTES);
    for (let i = 0; i < FRAME_BYTES; i++) {
      const n = f * FRAME_BYTES + i;
      frame[i] = linearToMulaw(peak * Math.sin((2 * Math.PI * hz * n) / SAMPLE_RATE_HZ));
    }
    frames.push(frame.toString('base64'));
  }
  return frames;
}

/**
 * Wraps raw μ-law bytes in a WAV file (WAVE_FORMAT_MULAW = 7, 8 kHz, mono, 8 bits). Non-PCM
 * formats carry an 18-byte `fmt ` chunk and a `fact` chunk with the sample count.
 */
export function wavFromMulaw(frames: Buffer): Buffer {
  const dataBytes = frames.length;
  const pad = dataBytes % 2; // RIFF chunks are word-aligned
  const header = Buffer.alloc(58);
  let o = 0;
  o += header.write('RIFF', o, 'ascii');
  o = header.writeUInt32LE(header.length - 8 + dataBytes + pad, o);
  o += header.write('WAVE', o, 'ascii');
  o += header.write('fmt ', o, 'ascii');
  o = header.writeUInt32LE(18, o);
  o = header.writeUInt16LE(7, o); // μ-law
  o = header.writeUInt16LE(1, o); // channels
  o = header.writeUInt32LE(SAMPLE_RATE_HZ, o);
  o = header.writeUInt32LE(SAMPLE_RATE_HZ, o); // bytes per second
  o = header.writeUInt16LE(1, o); // block align
  o = header.writeUInt16LE(8, o); // bits per sample
  o = header.writeUInt16LE(0, o); // extension size
  o += header.write('fact', o, 'ascii');
  o = header.writeUInt32LE(4, o);
  o = header.writeUInt32LE(dataBytes, o); // samples per channel
  o += header.write('data', o, 'ascii');
  header.writeUInt32LE(dataBytes, o);
  return Buffer.concat([header, frames, Buffer.alloc(pad)]);
}
