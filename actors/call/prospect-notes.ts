import type { Queryable } from '../../db/pool.ts';
import type { CallRow } from '../../db/calls.ts';
import { createProspectResearchRepository } from '../../db/prospect-research.ts';

/**
 * What research found about the called business, for the agent's instructions (agent-setup.ts
 * `prospectNotes`); null when the request named no website or its research failed. Every attempt
 * of a request shares its first attempt's research (`request_id`, the request's id). Never
 * returned by the API.
 */
export async function prospectNotesOf(pool: Queryable, call: Pick<CallRow, 'id'> & { request_id?: string | null }): Promise<string | null> {
  const row = await createProspectResearchRepository(pool).get(call.request_id ?? call.id);
  return row?.status === 'done' ? row.notes : null;
}
