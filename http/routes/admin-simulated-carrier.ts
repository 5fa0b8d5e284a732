import type { App } from './app-type.ts';
import type { TestClockControl } from './deps.ts';
import type { Carrier } from '../../telephony/carrier.ts';
import type { Mode } from '../../runtime/types.ts';
import { SimulatedCarrier } from '../../telephony/simulated/simulated-carrier.ts';
import { ApiError } from '../errors.ts';

/** What these routes use. */
export interface AdminSimulatedCarrierRouteDeps {
  carriers: Record<Mode, Carrier>;
  /** Present only under SWITCHBOARD_TEST_CLOCK=1, which this test facility requires. */
  testClock: TestClockControl | null;
}

/**
 * Test facility (SWITCHBOARD_TEST_CLOCK=1 only): the simulated carrier of this process ends the
 * ring of every call still ringing now, each then going on as its number's scenario says. The
 * dialler's bench holds its calls ringing (SWITCHBOARD_SIMULATED_RING_MS) through its measured
 * window, as real calls ring and talk long after their admission, and ends them with this.
 */
export function registerAdminSimulatedCarrierRoutes(app: App, services: AdminSimulatedCarrierRouteDeps): void {
  app.post('/admin/v1/simulated_carrier/release_ringing', { config: { auth: 'admin' as const }, schema: { hide: true, tags: ['admin'] } }, async () => {
    if (!services.testClock) throw new ApiError('test_clock_disabled');
    const carrier = services.carriers.test;
    return { object: 'simulated_carrier_release', released: carrier instanceof SimulatedCarrier ? carrier.releaseRinging() : 0 };
  });
}
