import type { Deps } from '../../runtime/deps.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { createEmergencyClosureRepository, type EmergencyClosureRow } from '../../db/emergency-closures.ts';
import { createCallRepository } from '../../db/calls.ts';
import { withTransaction } from '../../db/pool.ts';
import { EMERGENCY_JURISDICTIONS } from './calling-windows.ts';

/** A closure as the console shows it. */
export interface EmergencyClosureView {
  object: 'emergency_closure';
  jurisdiction: string;
  closed: boolean;
  reason: string | null;
  closed_at: string | null;
}

/**
 * The operator switch of emergency closures (La. R.S. 45:844.31: no solicitation while a state of
 * emergency is declared; docs/compliance.md). A plain module: each switch is one statement. The
 * dialler reads every closure in its admission statement (db/admission.ts) and the pure rule
 * (calling-windows.ts `emergencyClosure`) decides which numbers it reaches.
 */
export function createEmergencyClosures(deps: Pick<Deps, 'pool' | 'clock'>) {
  const repo = createEmergencyClosureRepository(deps.pool);

  /** The code as kept ('us-la' is 'US-LA'); `invalid_parameter` for one no number can be in. */
  function known(jurisdiction: string): string {
    const code = jurisdiction.toUpperCase();
    if (!EMERGENCY_JURISDICTIONS.has(code)) throw new Refusal('invalid_parameter', `${jurisdiction} is not a jurisdiction calls are made to (a country such as US, or US-LA, CA-BC, ES-MD).`);
    return code;
  }

  return {
    /** Closes a jurisdiction to calling until it is reopened. */
    async close(jurisdiction: string, reason: string): Promise<EmergencyClosureView> {
      return view(await repo.close({ jurisdiction: known(jurisdiction), reason, now: deps.clock.now() }));
    },

    /**
     * Reopens a jurisdiction; reopening one that is not closed changes nothing. Requests held by a
     * closure are due again at once (the dialler asks every gate anew), not after their 15 minutes.
     */
    async reopen(jurisdiction: string): Promise<EmergencyClosureView> {
      const code = known(jurisdiction);
      await withTransaction(deps.pool, async (client) => {
        if (await createEmergencyClosureRepository(client).reopen(code)) {
          await createCallRepository(client).wakeWaitingEverywhere(['emergency_closure'], deps.clock.now());
        }
      });
      return { object: 'emergency_closure', jurisdiction: code, closed: false, reason: null, closed_at: null };
    },

    async list(): Promise<EmergencyClosureView[]> {
      return (await repo.list()).map(view);
    },
  };
}

export type EmergencyClosures = ReturnType<typeof createEmergencyClosures>;

function view(row: EmergencyClosureRow): EmergencyClosureView {
  return { object: 'emergency_closure', jurisdiction: row.jurisdiction, closed: true, reason: row.reason, closed_at: row.closed_at.toISOString() };
}
