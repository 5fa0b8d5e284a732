import type { AnyApp } from '../routes/app-type.ts';
import type { ConnectionError, FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import http from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, apiErrorOf, type ErrorCode } from '../errors.ts';
import { validationError } from './validation.ts';
import { isDatabaseOutOfResources, isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { genRequestId, REQUEST_ID_HEADER, SECURITY_HEADERS } from './request-log.ts';

/** The body of every error response (spec: Errors). */
export function errorBody(err: ApiError, requestId: string) {
  return { error: { type: err.type, code: err.code, message: err.message, request_id: requestId } };
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply.code(err.status).type('application/json; charset=utf-8').send(errorBody(err, reply.request.id));
}

/** Maps what fastify itself throws (parsing, size, validation) to catalogue errors. */
function fromFastify(err: FastifyError): ApiError | null {
  if (err.validation) return validationError(err.validation as never, err.validationContext ?? 'body');
  switch (err.code) {
    // A percent-encoded path that is not UTF-8 (an encoded lone surrogate, a stray %FF).
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_string', 'Invalid path: its percent-encoding is not valid UTF-8.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('field_too_long', 'A path parameter is longer than 1,024 characters.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_content_type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json');
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) return new ApiError('invalid_json');
  return null;
}

/**
 * The client closed the connection (or its request timed out and node closed it) while its body
 * was being read: nobody is left to answer and nothing went wrong on this side.
 */
export function clientWentAway(err: FastifyError, request: FastifyRequest): boolean {
  // Node's own abort of the request stream (code ECONNRESET, which a database socket's reset also
  // has: only the request's own stream being destroyed tells them apart).
  return err.message === 'aborted' && (request.raw.destroyed || request.raw.socket?.destroyed === true);
}

/**
 * Seconds a client is told to wait when the database cannot be reached: a restart of PostgreSQL
 * takes about that long, and the service reconnects by itself (docs/decisions.md).
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
/**
 * Seconds a client is told to wait when PostgreSQL refuses work for want of resources (SQLSTATE
 * class 53 but 53300: a full disk, no memory): space comes back when an operator makes it, not in
 * the seconds of a restart.
 */
export const OUT_OF_RESOURCES_RETRY_AFTER_SECONDS = 30;

/**
 * The one error boundary (STYLE 9): catalogue errors go out as they are, and a domain refusal as
 * the catalogue's entry of its code (the only place one becomes an answer); an error meaning the
 * database cannot be reached right now is 503 service_unavailable with Retry-After (the process
 * logs the outage once, runtime/database-health.ts, and each request's line has its 503);
 * anything else unexpected is logged in full and answered 500 api_error with no internals.
 */
export function installErrorBoundary(app: AnyApp): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (clientWentAway(err, request)) {
      request.log.debug({ request_id: request.id, code: err.code }, 'the client closed the connection before its request was read');
      return reply.code(400).send();
    }
    const apiError = apiErrorOf(err) ?? fromFastify(err);
    if (apiError) {
      if (apiError.status >= 500) request.log.error({ err, code: apiError.code }, 'request failed');
      return sendError(reply, apiError);
    }
    if (isDatabaseUnreachable(err)) {
      const code = (err as { code?: string }).code;
      if (isDatabaseOutOfResources(err) && code !== '53300') {
        // One line without a stack: the operator must learn the disk is full from the API's log too.
        request.log.warn({ error_code: code, error: err.message }, 'the database refuses the work for want of resources; answered 503');
        return sendError(
          reply,
          new ApiError('service_unavailable', 'The service cannot store this right now; nothing was changed. Retry after the number of seconds in Retry-After.', {
            'retry-after': String(OUT_OF_RESOURCES_RETRY_AFTER_SECONDS),
          }),
        );
      }
      return sendError(reply, new ApiError('service_unavailable', undefined, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }));
    }
    request.log.error({ err }, 'unexpected error');
    return sendError(reply, new ApiError('api_error'));
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, new ApiError('route_not_found', `No such endpoint: ${request.method} ${request.url.split('?')[0]}.`)));
}

/**
 * Errors of the router, before any route or hook runs (fastify's `frameworkErrors`): a path
 * parameter longer than the router takes (414) or a path that is not valid percent-encoding.
 * Answered in the error shape with a request id, and without echoing the path.
 */
export function frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.headers({ [REQUEST_ID_HEADER]: request.id, ...SECURITY_HEADERS });
  request.log.info({ request_id: request.id, method: request.method, status: err.statusCode, code: err.code }, 'request refused by the router');
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return void sendError(reply, new ApiError('uri_too_long'));
  // An encoded lone surrogate or a stray %FF: text that cannot be decoded, so cannot be stored.
  if (err.code === 'FST_ERR_BAD_URL') return void sendError(reply, new ApiError('invalid_string', 'The request path is not valid percent-encoded UTF-8.'));
  request.log.error({ err }, 'unexpected router error');
  sendError(reply, new ApiError('api_error'));
}

/** What node's HTTP parser refuses before a request exists, by the code it gives. */
function clientErrorCode(err: ConnectionError): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'malformed_request';
}

/**
 * Errors of a connection that never became a request fastify sees (fastify's
 * `clientErrorHandler`): headers over node's limit (431), a request not received within the
 * request timeout (408), bytes that are not HTTP (400). Written straight to the socket in the
 * error shape with a request id, then the connection is closed; one log line, no stack.
 */
export function clientErrorAnswer(log: FastifyBaseLogger) {
  return (err: ConnectionError, socket: Socket): void => {
    // A reset connection, or one already closed: nothing to answer, and nothing went wrong here.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // The client closed its side in the middle of a request: an abort, not a malformed request.
    if (err.code === 'HPE_INVALID_EOF_STATE') {
      log.debug({ cause: err.code }, 'the client closed the connection in the middle of a request');
      socket.destroy();
      return;
    }
    const apiError = new ApiError(clientErrorCode(err));
    const requestId = genRequestId();
    log.info({ request_id: requestId, status: apiError.status, code: apiError.code, cause: err.code }, 'connection answered and closed before a request was routed');
    if (socket.writable) {
      const body = JSON.stringify(errorBody(apiError, requestId));
      const headers = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(body)),
        [REQUEST_ID_HEADER]: requestId,
        ...SECURITY_HEADERS,
        connection: 'close',
      };
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.write(`HTTP/1.1 ${apiError.status} ${http.STATUS_CODES[apiError.status]}\r\n${head}\r\n${body}`);
    }
    socket.destroy();
  };
}
