import { Link, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api, apiUrl } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Empty, Facts, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { dateTime, duration, words } from '../ui/format.ts';
import type { CallPage, TranscriptTurn, TrailStep } from '../types.ts';

const GATE_WORDS: Record<string, string> = {
  readiness: 'Readiness',
  calling_window: 'Calling window',
  consent: 'Consent',
  dnc: 'Do-not-call lists',
  do_not_call: 'Do-not-call lists',
  hold: 'Hold on the balance',
  frequency_cap: 'How often the number may be called',
  line_type: 'Line type',
};

function turnsOf(t: CallPage['transcript']): TranscriptTurn[] {
  if (!t) return [];
  return Array.isArray(t) ? t : (t.turns ?? []);
}

function speakerOf(turn: TranscriptTurn): string {
  const who = turn.speaker ?? turn.role ?? '';
  if (who === 'agent' || who === 'assistant') return 'Agent';
  if (who === 'user' || who === 'callee' || who === 'human') return 'Called party';
  return words(who) || 'Speaker';
}

function detailText(detail: TrailStep['detail']): string {
  if (detail === null || detail === undefined) return '';
  if (typeof detail === 'string') return detail;
  return Object.entries(detail)
    .map(([k, v]) => `${words(k)}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('; ');
}

/** A call: outcome, duration, summary, the recording, the transcript, the appointment and the compliance trail. */
export default function Call() {
  const { id = '' } = useParams();
  const mode = useMode();
  const page = useQuery({ queryKey: ['/calls', id, mode], queryFn: () => api.get<CallPage>(`/calls/${encodeURIComponent(id)}`, { mode }) });
  return (
    <QueryState query={page}>
      {({ call, transcript, compliance_trail, appointment }) => {
        const turns = turnsOf(transcript);
        return (
          <>
            <p>
              <Link to="/calls">← Calls</Link>
            </p>
            <PageHeader
              title={call.business_name ? `Call to ${call.business_name}` : `Call to ${call.phone}`}
              description={
                <>
                  <Badge status={call.status} /> {call.outcome && <Badge status={call.outcome} tone={call.outcome === 'appointment_booked' ? 'good' : 'neutral'} />}
                </>
              }
            />
            <Section title="Summary" id="summary">
              <Facts
                items={[
                  ['Outcome', call.outcome ? words(call.outcome) : call.waiting_reason ? `Waiting: ${words(call.waiting_reason)}` : 'Not finished'],
                  ['Duration', call.finished ? duration(call.duration_seconds) : '—'],
                  ['Number', call.phone],
                  ['Customer', <Link key="c" to={`/customers/${call.customer_id}`}>{call.customer_id}</Link>],
                  ['Queued', dateTime(call.created_at)],
                  ['Dialled', dateTime(call.dialed_at)],
                  ['Answered', dateTime(call.answered_at)],
                  ['Ended', dateTime(call.ended_at)],
                ]}
              />
              {call.waiting_detail && <p className="muted">{call.waiting_detail}</p>}
              {call.summary && (
                <>
                  <h3>What was said, in short</h3>
                  <p>{call.summary}</p>
                </>
              )}
            </Section>
            <Section title="Recording" id="recording">
              {call.recording_url ? (
                <audio controls preload="none" src={apiUrl(`/calls/${encodeURIComponent(call.id)}/recording`, { mode })}>
                  <a href={apiUrl(`/calls/${encodeURIComponent(call.id)}/recording`, { mode })}>Download the recording</a>
                </audio>
              ) : (
                <Empty title="No recording">{call.finished ? 'This call was not recorded.' : 'The recording appears when the call has ended.'}</Empty>
              )}
            </Section>
            <Section title="Transcript" id="transcript">
              {turns.length === 0 ? (
                <Empty title="No transcript" />
              ) : (
                <ol className="transcript">
                  {turns.map((t, i) => (
                    <li key={i} className={`role-${t.role ?? t.speaker ?? 'other'}`}>
                      <span className="speaker">{speakerOf(t)}</span>
                      {t.text ?? t.content}
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <Section title="Appointment" id="appointment">
              {appointment ? (
                <Facts
                  items={[
                    ['When', `${dateTime(appointment.start_at, appointment.timezone)} to ${dateTime(appointment.end_at, appointment.timezone)}`],
                    ['Time zone', appointment.timezone],
                    ['With', appointment.attendee_name ?? '—'],
                    ['Status', <Badge key="s" status={appointment.status} />],
                    ['Notes', appointment.notes ?? '—'],
                  ]}
                />
              ) : call.appointment_id ? (
                <p>
                  Appointment <code>{call.appointment_id}</code>: see <Link to="/appointments">Appointments</Link>.
                </p>
              ) : (
                <Empty title="No appointment booked on this call" />
              )}
            </Section>
            <Section title="Compliance trail" id="compliance-trail">
              <p className="muted">Each check the request passed before it was dialled, when, and on what data.</p>
              {compliance_trail.length === 0 ? (
                <Empty title="No checks yet">The trail is written when the request is dialled.</Empty>
              ) : (
                <ol className="trail">
                  {compliance_trail.map((s, i) => (
                    <li key={`${s.gate}-${i}`}>
                      {s.passed ? <Badge tone="good">Passed</Badge> : <Badge tone="bad">Not passed</Badge>}
                      <span>
                        <strong>{GATE_WORDS[s.gate] ?? words(s.gate)}</strong> <span className="muted">{dateTime(s.at)}</span>
                      </span>
                      {detailText(s.detail) && <span className="detail">{detailText(s.detail)}</span>}
                    </li>
                  ))}
                </ol>
              )}
            </Section>
          </>
        );
      }}
    </QueryState>
  );
}
