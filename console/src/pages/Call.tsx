import { Link, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Empty, Facts, Loading, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { dateTime, duration, words } from '../ui/format.ts';
import type { AppointmentRow, CallPage, List } from '../types.ts';
import { CallConduct } from './CallConduct.tsx';

/** The trail's gates in words (http/schemas/console-calls.ts TrailEntrySchema). */
const GATE_WORDS: Record<string, string> = {
  request: 'Request received',
  deadline: 'Dial-before deadline',
  do_not_call: 'Do-not-call lists',
  consent: 'Consent and its rule',
  no_redial: 'No redial after a hang-up',
  readiness: 'Readiness',
  frequency_caps: 'How often the number may be called',
  emergency_closure: 'Emergency closures',
  calling_window: 'Calling window',
  capacity: 'Capacity and caps',
  caller_id: 'Caller ID',
  hold: 'Hold on the balance',
  identification: 'AI identification',
};

function speakerOf(role: string): string {
  if (role === 'agent' || role === 'assistant') return 'Agent';
  if (role === 'callee' || role === 'user') return 'Called party';
  return words(role) || 'Speaker';
}

/** A call: outcome, duration, summary, the recording, the transcript, the appointment and the compliance trail. */
export default function Call() {
  const { id = '' } = useParams();
  const mode = useMode();
  const page = useQuery({
    queryKey: ['/calls', id, mode],
    queryFn: () => api.get<CallPage>(`/calls/${encodeURIComponent(id)}`, { mode }),
    // A call on its way (queued, dialling, talking, waiting for its recording) is followed as it goes.
    refetchInterval: (q) => (q.state.data && q.state.data.call.finished && (q.state.data.recording_url || !q.state.data.call.answered_at) ? false : 3000),
    refetchOnMount: 'always',
  });
  return (
    <QueryState query={page}>
      {({ call, transcript, recording_url, compliance_trail }) => {
        const turns = transcript?.lines ?? [];
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
              {recording_url ? (
                <audio controls preload="none" src={recording_url}>
                  <a href={recording_url}>Download the recording</a>
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
                    <li key={i} className={`role-${t.role}`}>
                      <span className="speaker">{speakerOf(t.role)}</span>
                      {t.text}
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <Section title="Appointment" id="appointment">
              {call.appointment_id ? <AppointmentFacts customerId={call.customer_id} appointmentId={call.appointment_id} /> : <Empty title="No appointment booked on this call" />}
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
                      {s.detail && <span className="detail">{s.detail}</span>}
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <CallConduct callId={call.id} mode={mode} dialled={call.dialed_at !== null} finished={call.finished} />
          </>
        );
      }}
    </QueryState>
  );
}

/** The appointment booked on the call, from the customer's appointments. */
function AppointmentFacts({ customerId, appointmentId }: { customerId: string; appointmentId: string }) {
  const mode = useMode();
  const list = useQuery({
    queryKey: ['/appointments', mode, customerId],
    queryFn: () => api.get<List<AppointmentRow>>('/appointments', { mode, customer_id: customerId, limit: 200 }),
  });
  const a = list.data?.data.find((x) => x.id === appointmentId);
  if (list.isPending) return <Loading />;
  if (!a) {
    return (
      <p>
        Appointment <code>{appointmentId}</code>: see <Link to="/appointments">Appointments</Link>.
      </p>
    );
  }
  return (
    <Facts
      items={[
        ['When (their time)', `${dateTime(a.start_at, a.customer_timezone)} to ${dateTime(a.end_at, a.customer_timezone)}`],
        ['Time zone', a.customer_timezone],
        ['With', a.attendee_name ?? '—'],
        ['Status', <Badge key="s" status={a.status} />],
        ['Notes', a.notes ?? '—'],
      ]}
    />
  );
}
