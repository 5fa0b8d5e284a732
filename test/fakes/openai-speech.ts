/**
 * A fake of OpenAI's speech endpoint (`POST /v1/audio/speech`, API reference "Create speech":
 * https://platform.openai.com/docs/api-reference/audio/createSpeech) for the openai SDK pointed
 * at it by `baseURL`. As the real endpoint: a bearer key is required (401 `invalid_api_key`);
 * `model`, `input` (at most 4,096 characters) and `voice` are required and checked (400
 * `invalid_request_error`); `response_format` is one of mp3, opus, aac, flac, wav, pcm (default
 * mp3) and `pcm` is raw 24 kHz 16-bit signed little-endian mono; errors are the API's JSON error
 * shape `{error:{message,type,param,code}}`. Audio is a tone whose length follows the text (60 ms a
 * character). Scripted answers give an error status (429 with retry-after-ms, 500) or a delay.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_SPEECH_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
export const FAKE_SPEECH_MS_PER_CHARACTER = 60;
const RATE = 24_000;

export interface SpeechRequestBody {
  model: string;
  input: string;
  voice: string;
  instructions?: string;
  response_format?: string;
  [field: string]: unknown;
}

export type FakeSpeechAnswer = { status: number; message?: string; type?: string; code?: string; retryAfterMs?: number } | { delayMs: number };

export interface FakeOpenAISpeech {
  /** Base URL for the SDK's `baseURL` (`http://127.0.0.1:<port>/v1`). */
  url: string;
  apiKey: string;
  /** Every request that passed the key check, in arrival order. */
  requests: SpeechRequestBody[];
  script(...answers: FakeSpeechAnswer[]): void;
  close(): Promise<void>;
}

/** The 24 kHz s16le tone the fake returns for `input`. */
export function fakeSpeechPcm(input: string): Buffer {
  const samples = Math.round((input.length * FAKE_SPEECH_MS_PER_CHARACTER * RATE) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let n = 0; n < samples; n++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 300 * n) / RATE)), n * 2);
  return pcm;
}

export async function startFakeOpenAISpeech(apiKey = 'sk-test-speech'): Promise<FakeOpenAISpeech> {
  const requests: SpeechRequestBody[] = [];
  const queue: FakeSpeechAnswer[] = [];
  const error = (res: http.ServerResponse, status: number, message: string, type: string, param: string | null, code: string | null, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type, param, code } }));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/v1/audio/speech') return error(res, 404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error', null, null);
      if (req.headers.authorization !== `Bearer ${apiKey}`) return error(res, 401, 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key');
      let body: SpeechRequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return error(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null, null);
      }
      if (typeof body.model !== 'string' || !body.model) return error(res, 400, "Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter');
      if (typeof body.input !== 'string' || !body.input) return error(res, 400, "Missing required parameter: 'input'.", 'invalid_request_error', 'input', 'missing_required_parameter');
      if (body.input.length > 4096) return error(res, 400, "'input' is too long: at most 4096 characters.", 'invalid_request_error', 'input', 'string_above_max_length');
      if (!FAKE_SPEECH_VOICES.includes(body.voice)) return error(res, 400, `Invalid value for 'voice': '${body.voice}'.`, 'invalid_request_error', 'voice', 'invalid_value');
      const format = body.response_format ?? 'mp3';
      if (!FORMATS.includes(format)) return error(res, 400, `Invalid value for 'response_format': '${format}'.`, 'invalid_request_error', 'response_format', 'invalid_value');
      requests.push(body);
      const answer = queue.shift();
      if (answer && 'status' in answer) {
        return error(res, answer.status, answer.message ?? 'The server had an error.', answer.type ?? (answer.status === 429 ? 'requests' : 'server_error'), null, answer.code ?? null, answer.retryAfterMs !== undefined ? { 'retry-after-ms': String(answer.retryAfterMs) } : {});
      }
      if (answer && 'delayMs' in answer) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (format !== 'pcm') return error(res, 400, 'the fake speaks only pcm', 'invalid_request_error', 'response_format', 'unsupported_by_fake');
      const pcm = fakeSpeechPcm(body.input);
      res.writeHead(200, { 'content-type': 'audio/pcm', 'content-length': String(pcm.length) });
      res.end(pcm);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    script: (...answers) => void queue.push(...answers),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
