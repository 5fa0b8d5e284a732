import type { HttpDeps } from '../http/app.ts';
import type { CarrierInbox } from '../actors/call/carrier-inbox.ts';
import type { CallRegistry } from './calls.ts';
import type { Payments } from '../actors/payments/payments.ts';
import type { ResearchOptions } from '../actors/websites/research.ts';

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
  /** The payments room, whole (tests reach its inbox and worker). */
  payments: Payments;
  /** One round of the automatic top-up worker and the payments inbox's retries, now (tests). */
  payNow: () => Promise<number>;
  /**
   * One round of prospect research (actors/call/prospect-research.ts) now; resolves to the
   * researches it took (tests; `research` overrides the fetch's options, e.g. which origins are private but allowed).
   */
  researchNow: (research?: Partial<ResearchOptions>) => Promise<number>;
}
