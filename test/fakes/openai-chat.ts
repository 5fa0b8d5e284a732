/**
 * A fake of OpenAI's chat completions API (`POST /v1/chat/completions`, non-streaming) speaking
 * the public wire format, for the openai SDK pointed at it by `baseURL`. It checks the bearer
 * key, records every request it accepted, and answers from a script: a reply, an error status
 * (500, 429 with retry-after-ms, …), or silence (the client's timeout fires). With the script
 * empty it answers with `defaultReply`.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatCompletionRequest {
  model: string;
  messages: { role: string; content: string }[];
  [field: string]: unknown;
}

/** One recorded request: its headers and parsed body. */
export interface RecordedRequest {
  headers: http.IncomingHttpHeaders;
  body: ChatCompletionRequest;
}

/** What the fake does with one request. */
export type FakeAnswer =
  | { reply: string; delayMs?: number }
  | { status: number; message?: string; type?: string; retryAfterMs?: number }
  /** Never answers (until the server closes): the client times out. */
  | { hang: true };

export interface FakeOpenAIChat {
  /** Base URL for the SDK's `baseURL` (`http://127.0.0.1:<port>/v1`). */
  url: string;
  apiKey: string;
  /** Every request that passed the key check, in arrival order. */
  requests: RecordedRequest[];
  /** Requests refused for a missing or wrong key. */
  refused: number;
  /** Wire-format mistakes a real server would refuse with 400. */
  violations: string[];
  /** Queues answers for the next requests, in order. */
  script(...answers: FakeAnswer[]): void;
  /** The answer when nothing is scripted. Default: a short fixed sentence. */
  defaultReply: (request: ChatCompletionRequest) => string;
  close(): Promise<void>;
}

export const FAKE_DEFAULT_REPLY = 'Keep your opening short and ask for a meeting early.';

function violationsOf(body: unknown): string[] {
  const out: string[] = [];
  const b = body as Partial<ChatCompletionRequest> | null;
  if (!b || typeof b !== 'object') return ['body is not a JSON object'];
  if (typeof b.model !== 'string' || !b.model) out.push('model missing');
  if (!Array.isArray(b.messages) || b.messages.length === 0) out.push('messages missing');
  for (const m of b.messages ?? []) {
    if (!['system', 'user', 'assistant', 'developer', 'tool'].includes(m?.role)) out.push(`bad role ${m?.role}`);
    if (typeof m?.content !== 'string') out.push('message content is not a string');
  }
  if (b.stream) out.push('stream requested (this fake answers non-streaming only)');
  return out;
}

export async function startFakeOpenAIChat(opts: { apiKey?: string } = {}): Promise<FakeOpenAIChat> {
  const apiKey = opts.apiKey ?? 'sk-test-fake-chat';
  const queue: FakeAnswer[] = [];
  const hanging = new Set<http.ServerResponse>();
  const fake: FakeOpenAIChat = {
    url: '',
    apiKey,
    requests: [],
    refused: 0,
    violations: [],
    script: (...answers) => queue.push(...answers),
    defaultReply: () => FAKE_DEFAULT_REPLY,
    close: async () => {},
  };

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${crypto.randomUUID()}`, ...headers }).end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, message: string, type: string, headers: Record<string, string> = {}) =>
    json(res, status, { error: { message, type, param: null, code: null } }, headers);

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
        return error(res, 404, `Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error');
      }
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        fake.refused++;
        return error(res, 401, 'Incorrect API key provided.', 'invalid_request_error');
      }
      let body: ChatCompletionRequest;
      try {
        body = JSON.parse(raw);
      } catch {
        fake.violations.push('body is not JSON');
        return error(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      }
      const problems = violationsOf(body);
      if (problems.length) {
        fake.violations.push(...problems);
        return error(res, 400, problems.join('; '), 'invalid_request_error');
      }
      fake.requests.push({ headers: req.headers, body });
      const answer: FakeAnswer = queue.shift() ?? { reply: fake.defaultReply(body) };
      if ('hang' in answer) {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if ('status' in answer) {
        const headers: Record<string, string> = answer.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(answer.retryAfterMs) };
        return error(res, answer.status, answer.message ?? 'The server had an error while processing your request.', answer.type ?? 'server_error', headers);
      }
      const completion = {
        id: `chatcmpl-${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.reply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: Math.ceil(raw.length / 4), completion_tokens: Math.ceil(answer.reply.length / 4), total_tokens: Math.ceil((raw.length + answer.reply.length) / 4) },
      };
      if (answer.delayMs) setTimeout(() => json(res, 200, completion), answer.delayMs).unref();
      else json(res, 200, completion);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
