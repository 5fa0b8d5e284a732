import type { AnyApp } from '../routes/app-type.ts';
import { observeRequest } from '../../runtime/metrics.ts';

/**
 * Every answered request into `switchboard_http_request_duration_seconds` (runtime/metrics.ts), by
 * method, route pattern and status: the pattern (`/v1/calls/:id`), never the raw URL, so ids and
 * tokens never become labels; a request no route matched is `unmatched`.
 */
export function installRequestMetrics(app: AnyApp): void {
  // The callback form: no promise and no microtask per request.
  app.addHook('onResponse', (request, reply, done) => {
    observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
