import type { HttpDeps } from '../http/app.ts';
import type { CarrierInbox } from '../actors/call/carrier-inbox.ts';
import type { CallRegistry } from './calls.ts';

/**
 * The one object the composition root builds: everything the HTTP app's plugins and routes
 * declare they use (each route sees only its own part), plus what tests reach directly: the
 * call actors and the whole carrier inbox.
 */
export interface Services extends HttpDeps {
  calls: CallRegistry;
  carrierInbox: CarrierInbox;
  /** Runs one email sender round now and waits for its attempts; resolves to the emails it claimed (tests). */
  mailNow: () => Promise<number>;
}
