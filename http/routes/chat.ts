import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import type { ChatSessions } from './deps.ts';
import { ApiError } from '../errors.ts';
import { assertJsonDepth } from '../plugins/json-body.ts';
import { ChatBody, ChatContextSchema, ChatMessageSchema } from '../schemas/chat.ts';
import { responses } from '../schemas/common.ts';

const CHAT_PATH = '/v1/chat';
const CONTEXT_PATH = '/v1/chat/session';

/**
 * CORS for the chat endpoints only: any origin may call them from a browser, without cookies
 * (the session token travels in the Authorization header). @fastify/cors answers preflights
 * through a catch-all OPTIONS route; for any other path the delegator turns CORS off, so that
 * route answers 404 and no other endpoint is opened to other origins.
 */
const CHAT_CORS: FastifyCorsOptions = {
  origin: '*',
  methods: ['GET', 'POST'],
  allowedHeaders: ['authorization', 'content-type'],
  exposedHeaders: ['request-id'],
  credentials: false,
  maxAge: 600,
  // An OPTIONS without Origin is answered the same way rather than with a plain-text 400.
  strictPreflight: false,
};

/** Codes every session-token route can answer with. */
const SESSION_CODES = ['invalid_session_token', 'session_expired', 'session_revoked', 'service_unavailable', 'api_error'] as const;

/** What these routes use. */
export interface ChatRouteDeps {
  chat: ChatSessions;
}

/** The browser's side of the assistant: POST /v1/chat and the chat page's session read. */
export async function registerChatRoutes(app: App, services: ChatRouteDeps): Promise<void> {
  const { chat } = services;
  // The session a request's token named, found before its body is read (like an API key).
  const sessionIds = new WeakMap<FastifyRequest, string>();
  const authenticate = async (request: FastifyRequest) => {
    sessionIds.set(request, await chat.sessionOf(request.headers.authorization));
  };
  const session = (request: FastifyRequest) => {
    const id = sessionIds.get(request);
    if (!id) throw new Error('chat route reached without a session');
    return id;
  };

  await app.register(async (scope) => {
    // @fastify/cors answers preflights through a catch-all OPTIONS route of its own, which reads
    // no credential and serves nothing: it is public (every route declares how it authenticates).
    scope.addHook('onRoute', (route) => {
      if (route.method === 'OPTIONS' && route.url === '*') route.config = { ...route.config, auth: 'none' };
    });
    await scope.register(cors, {
      delegator: (request, done) => done(null, [CHAT_PATH, CONTEXT_PATH].includes(request.routeOptions.url ?? '') ? CHAT_CORS : { origin: false }),
    });
    const typed = scope as unknown as App;
    // Preflights are answered by the CORS hook before any handler; these routes exist so that a
    // preflight of these paths is not taken for an API-key request by the auth hook.
    for (const url of [CHAT_PATH, CONTEXT_PATH]) {
      typed.options(url, { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) => reply.code(204).send());
    }

    typed.post(
      CHAT_PATH,
      {
        config: { auth: 'none' },
        onRequest: authenticate,
        // The spec declares `history` a string: a string holding the JSON array is accepted too,
        // and turned into that array here, so validation and the handler only see the array.
        preValidation: async (request) => {
          const body = request.body as { history?: unknown } | undefined;
          if (typeof body?.history !== 'string') return;
          let history: unknown;
          // The same nesting bound as a body's: the string is a body of its own.
          assertJsonDepth(body.history, '"history"');
          try {
            history = JSON.parse(body.history);
          } catch {
            history = undefined;
          }
          if (!Array.isArray(history)) throw new ApiError('invalid_parameter', 'history must be an array of {role, content}, or a string holding that array as JSON.');
          body.history = history;
        },
        schema: {
          operationId: 'sendChatMessage',
          summary: 'Ask the sales-coach assistant (Authorization: Bearer <session token>, never an API key)',
          description: 'Cross-origin allowed, no cookies. The browser keeps the thread and sends it as `history`; nothing is stored.',
          tags: ['chat'],
          security: [{ sessionToken: [] }],
          body: ChatBody,
          response: responses({ 200: ChatMessageSchema }, [
            ...SESSION_CODES, 'message_required', 'message_too_long', 'insufficient_balance', 'session_exhausted', 'chat_unavailable',
            'invalid_parameter', 'unknown_parameter', 'field_too_long', 'invalid_json', 'unsupported_content_type',
          ], { auth: 'none' }),
        },
      },
      async (request) => chat.send(session(request), request.body.message, request.body.history ?? []),
    );

    typed.get(
      CONTEXT_PATH,
      {
        config: { auth: 'none' },
        onRequest: authenticate,
        schema: {
          operationId: 'getChatContext',
          summary: "The chat page's start: the reseller's brand and the session's expiry (counts nothing)",
          description: 'What the chat page shows before the first message; reading it uses none of the session’s messages.',
          tags: ['chat'],
          security: [{ sessionToken: [] }],
          response: responses({ 200: ChatContextSchema }, [...SESSION_CODES], { auth: 'none' }),
        },
      },
      async (request) => chat.context(session(request)),
    );
  });
}
