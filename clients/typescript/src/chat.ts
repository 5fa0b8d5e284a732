/**
 * `@switchboard-voice/client/chat`: the chat calls a browser makes with a chat session token
 * (minted by the reseller's server with `createChatSession`). Browser-safe: no Node modules, and
 * no API key is ever taken here — an API key sent to `/v1/chat` is refused anyway
 * (`401 invalid_session_token`), and must never reach a browser.
 *
 *   import { sendChatMessage } from '@switchboard-voice/client/chat';
 *   const { reply } = await sendChatMessage({ baseUrl, sessionToken, message: 'How did my calls go?' });
 */
import createFetchClient from 'openapi-fetch';
import type { operations } from './schema.js';
import { errorFromResponse } from './errors.js';
import { retryingFetch } from './transport.js';
import { operations as table } from './operations.js';

export * from './errors.js';

type Body<K extends keyof operations> = operations[K]['responses'] extends { 200: { content: { 'application/json': infer J } } } ? J : never;
/** The body of `POST /v1/chat`: `message`, and `history` (the thread so far, oldest first). */
export type ChatMessageRequest = NonNullable<operations['sendChatMessage']['requestBody']>['content']['application/json'];
/** The answer of `POST /v1/chat`. */
export type ChatMessage = Body<'sendChatMessage'>;
/** The answer of `GET /v1/chat/session`: the brand, the person, the session's counts. */
export type ChatContext = Body<'getChatContext'>;

export interface ChatOptions {
  /** Where the API answers (no `/v1`). */
  baseUrl: string;
  /** The session token, `svc_sess_test_…` or `svc_sess_live_…`. An API key is refused here. */
  sessionToken: string;
  signal?: AbortSignal;
  /** The fetch to send with (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

function clientFor(options: ChatOptions) {
  if (!/^svc_sess_(test|live)_/.test(options.sessionToken ?? '')) {
    throw new TypeError('a chat session token (svc_sess_…) is required; never put an API key in a browser');
  }
  // Messages are not retried (POST /v1/chat takes no Idempotency-Key: a retry could count twice); the session read is.
  return createFetchClient<Record<string, never>>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.sessionToken}` },
    fetch: retryingFetch({ maxRetries: 2, fetch: options.fetch }),
  });
}

async function send<K extends 'sendChatMessage' | 'getChatContext'>(id: K, options: ChatOptions, body?: unknown): Promise<Body<K>> {
  const request = clientFor(options).request as unknown as (method: string, path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const { data, error, response } = await request(table[id].method.toLowerCase(), table[id].path, { body, signal: options.signal });
  if (!response.ok) throw errorFromResponse(response, error);
  return data as Body<K>;
}

/** `POST /v1/chat`: one message to the sales coach; answers its reply and the session's counts. */
export function sendChatMessage(options: ChatOptions & ChatMessageRequest): Promise<ChatMessage> {
  const { baseUrl: _b, sessionToken: _t, signal: _s, fetch: _f, ...body } = options;
  return send('sendChatMessage', options, body);
}

/** `GET /v1/chat/session`: what the chat page shows (brand, business, person, counts). */
export function getChatContext(options: ChatOptions): Promise<ChatContext> {
  return send('getChatContext', options);
}
