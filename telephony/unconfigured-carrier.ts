/**
 * Live mode's carrier when none is configured (no TWILIO_* settings, and no simulated live carrier
 * asked for): it refuses everything. The numbers room and the call requests refuse live orders
 * and calls before they get here (`503 carrier_unavailable`) and readiness blocks live calls
 * (`carrier_not_configured`); this is the floor under them, so that no path can sell a fictional
 * number or play a simulated call for live money.
 */
import { CarrierNumberError, type Carrier } from './carrier.ts';

const WHY = 'no carrier is configured for live mode';

const refuse = async (): Promise<never> => {
  throw new CarrierNumberError('carrier_error', WHY);
};

export class UnconfiguredCarrier implements Carrier {
  readonly name = 'none' as const;
  dial = refuse;
  hangup = refuse;
  fetchStatus = refuse;
  fetchRecording = refuse;
  startRecording = refuse;
  stopRecording = refuse;
  lookupLineType = refuse;
  searchNumbers = refuse;
  buyNumber = refuse;
  releaseNumber = refuse;
  startCallerIdValidation = refuse;
  callerIdStatus = refuse;
  removeCallerId = refuse;
}
