import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, isApiError } from '../errors.ts';
import { validationError } from './validation.ts';
import { isDatabaseUnreachable } from '../../db/pool.ts';
import { REQUEST_ID_HEADER } from './request-log.ts';

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
 * What fastify's router answers by itself before any route or hook runs (a path that does not
 * decode, a path parameter over maxParamLength), in the error shape like everything else.
 */
export function answerFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, reply.request.id);
  sendError(reply, fromFastify(err) ?? new ApiError('api_error'));
}

/**
 * Seconds a client is told to wait when the database cannot be reached: a restart of PostgreSQL
 * takes about that long, and the service reconnects by itself (docs/decisions.md).
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * The one error boundary (STYLE 9): catalogue errors go out as they are; an error meaning the
 * database cannot be reached right now is 503 service_unavailable with Retry-After (the process
 * logs the outage once, runtime/database-health.ts, and each request's line has its 503);
 * anything else unexpected is logged in full and answered 500 api_error with no internals.
 */
export function installErrorBoundary(app: AnyApp): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = isApiError(err) ? err : fromFastify(err);
    if (apiError) {
      if (apiError.status >= 500) request.log.error({ err, code: apiError.code }, 'request failed');
      return sendError(reply, apiError);
    }
    if (isDatabaseUnreachable(err)) {
      return sendError(reply, new ApiError('service_unavailable', undefined, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }));
    }
    request.log.error({ err }, 'unexpected error');
    return sendError(reply, new ApiError('api_error'));
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, new ApiError('route_not_found', `No such endpoint: ${request.method} ${request.url.split('?')[0]}.`)));
}
