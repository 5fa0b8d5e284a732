/**
 * A fake of OpenAI's chat completions API (`POST /v1/chat/completions`, non-streaming) speaking
 * the public wire format, for the openai SDK pointed at it by `baseURL`. It checks the bearer
 * key, records every request it accepted, and answers from a script: a reply, an error status
 * (500, 429 with retry-after-ms, …), a refusal, or silence (the client's timeout fires). With the
 * script empty it answers with `defaultReply`. Structured output (`response_format` of type
 * `json_schema`) is checked as the real API checks it before answering (a strict schema's every
 * object must list all its properties as required and forbid others), and the default reply to
 * such a request is JSON that follows the schema, as a real model's always is. `max_tokens` is
 * refused as current models refuse it (HTTP 400 `unsupported_parameter`, "Use 'max_completion_tokens'
 * instead"; platform.openai.com/docs/api-reference/chat/create: `max_tokens` is deprecated and not
 * compatible with o-series and later models).
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
  | { reply: string; delayMs?: number; finishReason?: 'stop' | 'length' }
  /** The model declines: `content` null, `refusal` set, as structured output answers a refusal. */
  | { refusal: string }
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
  if (b.response_format !== undefined) out.push(...responseFormatViolations(b.response_format));
  return out;
}

/** What the real API refuses in a `response_format` (structured outputs' documented rules). */
function responseFormatViolations(format: unknown): string[] {
  const f = format as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown; strict?: unknown } } | null;
  if (!f || typeof f !== 'object') return ['response_format is not an object'];
  if (f.type === 'text' || f.type === 'json_object') return [];
  if (f.type !== 'json_schema') return [`response_format.type ${String(f.type)} is not text, json_object or json_schema`];
  const js = f.json_schema;
  if (!js || typeof js !== 'object') return ['response_format.json_schema missing'];
  const out: string[] = [];
  if (typeof js.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js.name)) out.push('response_format.json_schema.name must be 1-64 of a-z, A-Z, 0-9, _ and -');
  const schema = js.schema as Record<string, unknown> | undefined;
  if (!schema || typeof schema !== 'object') return [...out, 'response_format.json_schema.schema missing'];
  if (js.strict === true) {
    if (schema.type !== 'object') out.push('strict schema: the root must be an object');
    const visit = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.type === 'object') {
        const props = Object.keys((n.properties as object) ?? {});
        if (n.additionalProperties !== false) out.push(`strict schema: ${at} must set additionalProperties: false`);
        const required = Array.isArray(n.required) ? n.required : [];
        for (const p of props) if (!required.includes(p)) out.push(`strict schema: ${at}.${p} must be required`);
        for (const p of props) visit((n.properties as Record<string, unknown>)[p], `${at}.${p}`);
      }
      if (n.type === 'array') visit(n.items, `${at}[]`);
    };
    visit(schema, 'schema');
  }
  return out;
}

/** A value that follows `schema` (objects, arrays, strings, numbers, booleans, enums): a model's minimal answer. */
export function instanceOf(schema: unknown): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  switch (s.type) {
    case 'object':
      return Object.fromEntries(Object.entries((s.properties as Record<string, unknown>) ?? {}).map(([k, v]) => [k, instanceOf(v)]));
    case 'array':
      return [instanceOf(s.items)];
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'Text';
  }
}

/** The JSON schema a request asks its answer to follow, if any. */
function requestedSchema(body: ChatCompletionRequest): unknown {
  const f = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  return f?.type === 'json_schema' ? f.json_schema?.schema : undefined;
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
    defaultReply: (request) => {
      const schema = requestedSchema(request);
      return schema === undefined ? FAKE_DEFAULT_REPLY : JSON.stringify(instanceOf(schema));
    },
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
      if (body && typeof body === 'object' && 'max_tokens' in body) {
        fake.violations.push('max_tokens (current models take max_completion_tokens)');
        return json(res, 400, {
          error: {
            message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            type: 'invalid_request_error',
            param: 'max_tokens',
            code: 'unsupported_parameter',
          },
        });
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
      const content = 'refusal' in answer ? null : answer.reply;
      const said = content ?? ('refusal' in answer ? answer.refusal : '');
      const completion = {
        id: `chatcmpl-${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, refusal: 'refusal' in answer ? answer.refusal : null },
            logprobs: null,
            finish_reason: 'finishReason' in answer && answer.finishReason ? answer.finishReason : 'stop',
          },
        ],
        usage: { prompt_tokens: Math.ceil(raw.length / 4), completion_tokens: Math.ceil(said.length / 4), total_tokens: Math.ceil((raw.length + said.length) / 4) },
      };
      if ('delayMs' in answer && answer.delayMs) setTimeout(() => json(res, 200, completion), answer.delayMs).unref();
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
