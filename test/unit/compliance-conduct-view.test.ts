import test from 'ava';
import { conductView } from '../../actors/call/compliance-view.ts';
import type { ConductRow } from '../../db/compliance-conduct.ts';

/**
 * The console's (and the operator's) `conduct.opening.identification` is the opening **as
 * played** (docs/api.md, Console › Calls and appointments; the Call page shows it as "Opening
 * played"): a machine or a fax that cut the opening short leaves out the segments never played,
 * which the record's `identification` (the opening's whole text, kept for older readers) has.
 */
const row = (record: Record<string, unknown>): ConductRow => ({
  call_id: 'c1', account_id: 'a1', mode: 'test', answered_by: 'fax', end_reason: 'fax', record,
  opted_out_at: null, opt_out_reason: null, callback_at: null, objection: null, analysis_source: null,
});

const WHOLE = 'Hello, this call is on behalf of Bright Dental LLC. To stop these calls, press 9 or say stop. I am an automated assistant, and this call is recorded. You can reach Bright Dental LLC at (202) 555-0175. Do you have a moment?';

test('an opening cut short: only the segments played are shown as played', (t) => {
  const view = conductView(row({
    identification: WHOLE,
    opt_out_offered: true,
    identified_at: '2026-12-01T14:00:01+00:00',
    opening: {
      segments: [
        { kind: 'identification', text: 'Hello, this call is on behalf of Bright Dental LLC.', played: true },
        { kind: 'opt_out', text: 'To stop these calls, press 9 or say stop.', played: true },
        { kind: 'notice', text: 'I am an automated assistant, and this call is recorded.', played: true },
        { kind: 'callback', text: 'You can reach Bright Dental LLC at (202) 555-0175.', played: false },
        { kind: 'question', text: 'Do you have a moment?', played: false },
      ],
    },
  }));
  t.is(view.opening.identification, 'Hello, this call is on behalf of Bright Dental LLC. To stop these calls, press 9 or say stop. I am an automated assistant, and this call is recorded.');
  t.true(view.opening.opt_out_offered);
  t.is(view.opening.played_at, '2026-12-01T14:00:01.000Z');
});

test('nothing played: no opening shown as played; a record from before the segments keeps its identification', (t) => {
  const none = conductView(row({ identification: WHOLE, opt_out_offered: false, identified_at: '2026-12-01T14:00:01+00:00', opening: { segments: [{ kind: 'identification', text: 'Hello.', played: false }] } }));
  t.is(none.opening.identification, null);
  const older = conductView(row({ identification: WHOLE, opt_out_offered: true, identified_at: '2026-12-01T14:00:01+00:00' }));
  t.is(older.opening.identification, WHOLE);
});

test("a verdict the carrier reported after the call ended (the call row was already final) is still who answered: the record's amd_verdict", (t) => {
  const view = conductView({ ...row({ identification: WHOLE, amd_verdict: 'human' }), answered_by: null });
  t.is(view.answered_by, 'human');
  t.is(conductView({ ...row({ amd_verdict: null }), answered_by: null }).answered_by, null);
});
