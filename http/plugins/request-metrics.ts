import type { FastifyReply, FastifyRequest } from 'fastify';
import { observeRequest } from '../../runtime/metrics.ts';

/**
 * One answered request into `switchboard_http_request_duration_seconds` (runtime/metrics.ts), by
 * method, route pattern and status: the pattern (`/v1/calls/:id`), never the raw URL, so ids and
 * tokens never become labels; a request no route matched is `unmatched`. Called from the request
 * log's onResponse hook (http/plugins/request-log.ts `installRequestLog`): one hook for both, as
 * fastify's hook runner costs a step per hook per request.
 */
export function observeAnswered(request: FastifyRequest, reply: FastifyReply): void {
  observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
}
