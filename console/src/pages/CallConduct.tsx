import type { Static } from 'typebox';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import type { Mode } from '../types.ts';
import { Badge } from '../ui/Badge.tsx';
import { Empty, Facts, QueryState, Section } from '../ui/Page.tsx';
import { dateTime, words } from '../ui/format.ts';
import type { FullComplianceRecordSchema } from '../../../http/schemas/compliance-conduct.ts';

type FullRecord = Static<typeof FullComplianceRecordSchema>;

/** The carrier's answering-machine verdicts (Twilio AnsweredBy), in words. */
const ANSWERED_BY: Record<string, string> = {
  human: 'A person',
  machine_start: 'An answering machine (greeting heard)',
  machine_end_beep: 'An answering machine (after the beep)',
  machine_end_silence: 'An answering machine (after silence)',
  machine_end_other: 'An answering machine',
  fax: 'A fax machine',
  unknown: 'Not known',
};

/** The objections the transcript is read for (actors/call/call-summary.ts). */
const OBJECTIONS: Record<string, string> = {
  price: 'Price',
  timing: 'Timing',
  has_provider: 'Already has a provider',
  not_interested: 'Not interested',
  other: 'Another reason',
};

/**
 * How the call went, from its compliance record (issue 23): who answered, the opening as played,
 * the opt-out, the objection to the recording. The API's record never carries this; the
 * reseller sees it here and the operator in the admin view. Read once the call was dialled, and
 * again when it has finished.
 */
export function CallConduct({ callId, mode, dialled, finished }: { callId: string; mode: Mode; dialled: boolean; finished: boolean }) {
  const record = useQuery({
    // Read again when the call has finished: its verdict, opt-out and reading come during and after it.
    queryKey: ['/calls', callId, 'compliance_record', mode, finished],
    queryFn: () => api.get<FullRecord>(`/calls/${encodeURIComponent(callId)}/compliance_record`, { mode }),
    enabled: dialled,
    refetchOnMount: 'always',
  });
  return (
    <Section title="Compliance record" id="compliance-record">
      <p className="muted">What the called person heard and did, as kept on the call&rsquo;s compliance record.</p>
      {!dialled ? (
        <Empty title="No record yet">The record is written when the request is dialled.</Empty>
      ) : (
        <QueryState query={record} what="Loading the compliance record">
          {({ conduct, recorded_at, keep_until, consent, required_consent }) => (
            <Facts
              items={[
                ['Recorded', dateTime(recorded_at)],
                ['Kept until', keep_until ? dateTime(keep_until) : 'No legal term'],
                ['Consent held', words(consent.type)],
                ['Consent the rule needed', words(required_consent)],
                ['Who answered', conduct.answered_by ? (ANSWERED_BY[conduct.answered_by] ?? words(conduct.answered_by)) : '—'],
                [
                  'Opening played',
                  conduct.opening.identification ? (
                    <span key="o">
                      &ldquo;{conduct.opening.identification}&rdquo; <span className="muted">{dateTime(conduct.opening.played_at)}</span>
                    </span>
                  ) : (
                    'Not played'
                  ),
                ],
                ['Opt-out offered', conduct.opening.opt_out_offered === null ? '—' : conduct.opening.opt_out_offered ? 'Yes' : 'No'],
                [
                  'Opt-out during the call',
                  conduct.opt_out.during_call ? (
                    <span key="d">
                      <Badge tone="bad">Asked not to be called</Badge> <span className="muted">{dateTime(conduct.opt_out.at)}</span>
                    </span>
                  ) : (
                    'No'
                  ),
                ],
                [
                  'Objection to the recording',
                  conduct.recording_objection.objected ? (
                    <span key="r">
                      <Badge tone="bad">Objected</Badge> {conduct.recording_objection.action === 'end_call' ? 'Recording stopped; the call was ended.' : 'Recording stopped; the call went on unrecorded.'}{' '}
                      <span className="muted">{dateTime(conduct.recording_objection.at)}</span>
                    </span>
                  ) : (
                    'None'
                  ),
                ],
                ['Why the call ended', conduct.end_reason ? words(conduct.end_reason) : '—'],
                ['Callback asked for', conduct.analysis?.callback_at ? dateTime(conduct.analysis.callback_at) : '—'],
                ['Objection heard', conduct.analysis?.objection ? (OBJECTIONS[conduct.analysis.objection] ?? words(conduct.analysis.objection)) : '—'],
              ]}
            />
          )}
        </QueryState>
      )}
    </Section>
  );
}
