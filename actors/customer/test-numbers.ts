/**
 * Numbers handed to test customers by provisioning: from the ranges each country reserves for
 * fiction and drama (`telephony/simulated/fictional-numbers.ts`, the simulated carrier's stock),
 * so a test number can never ring a real person. A country without one gets a US number.
 */
import { fictionalNumbers } from '../../telephony/simulated/fictional-numbers.ts';

/** A fictional number in `country`; `pick` in [0,1) chooses which (Math.random by default). */
export function testNumberFor(country: string, pick = Math.random()): string {
  return fictionalNumbers(country, { limit: 1, start: pick })[0] ?? fictionalNumbers('US', { limit: 1, start: pick })[0];
}
