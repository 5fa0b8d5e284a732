import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan } from '../app/session.tsx';
import { MAX_ROLL_GRACE_SECONDS } from '../lists.ts';
import { Badge } from '../ui/Badge.tsx';
import { SecretOnce } from '../ui/Copy.tsx';
import { EventTypePicker } from '../ui/EventTypePicker.tsx';
import { Form, Field, FormError, Select, Submit } from '../ui/Form.tsx';
import { Empty, ErrorNote, Facts, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { Pager, useCursorList } from '../ui/Table.tsx';
import { useInvalidate } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../types.ts';

const GRACES = [
  { value: '0', label: 'None: the old secret stops now' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '259200', label: '3 days' },
  { value: String(MAX_ROLL_GRACE_SECONDS), label: '7 days (the longest)' },
];

/** One endpoint: edit, roll its secret, disable or delete, send a test event, and its deliveries with every attempt. */
export default function Webhook() {
  const { id = '' } = useParams();
  const endpoint = useQuery({ queryKey: ['/webhook_endpoints', id], queryFn: () => api.get<WebhookEndpoint>(`/webhook_endpoints/${encodeURIComponent(id)}`) });
  return (
    <>
      <p>
        <Link to="/developers/webhooks">← Webhooks</Link>
      </p>
      <QueryState query={endpoint}>
        {(e) => (
          <>
            <PageHeader
              title="Webhook endpoint"
              description={
                <>
                  <code>{e.url}</code> {e.enabled ? <Badge tone="good">Enabled</Badge> : <Badge tone="bad">Disabled</Badge>} <Badge tone="neutral">{e.mode === 'test' ? 'Test' : 'Live'}</Badge>
                </>
              }
            />
            <Actions endpoint={e} />
            <Edit endpoint={e} />
            <Deliveries endpoint={e} />
          </>
        )}
      </QueryState>
    </>
  );
}

function Actions({ endpoint }: { endpoint: WebhookEndpoint }) {
  const canWrite = useCan('developers:write');
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [grace, setGrace] = useState('86400');
  const [secret, setSecret] = useState<string | null>(null);
  const roll = useMutation({
    mutationFn: () => api.post<WebhookEndpoint>(`/webhook_endpoints/${endpoint.id}/roll_secret`, { grace_seconds: Number(grace) }),
    onSuccess: (e) => {
      setSecret(e.secret ?? null);
      void invalidate('/webhook_endpoints');
    },
  });
  const test = useMutation({
    mutationFn: () => api.post(`/webhook_endpoints/${endpoint.id}/test_event`),
    onSuccess: () => setTimeout(() => void invalidate('/webhook_endpoints'), 1500),
  });
  const toggle = useMutation({ mutationFn: () => api.patch(`/webhook_endpoints/${endpoint.id}`, { enabled: !endpoint.enabled }), onSuccess: () => invalidate('/webhook_endpoints') });
  const remove = useMutation({
    mutationFn: () => api.del(`/webhook_endpoints/${endpoint.id}`),
    onSuccess: () => {
      void invalidate('/webhook_endpoints');
      navigate('/developers/webhooks');
    },
  });
  return (
    <Section title="Signing secret and actions" id="actions">
      <Facts
        items={[
          ['Id', <code key="id">{endpoint.id}</code>],
          ['Created', dateTime(endpoint.created_at)],
          ['Previous secret', endpoint.previous_secret_expires_at ? `still signs until ${dateTime(endpoint.previous_secret_expires_at)}` : 'none'],
          ['Description', endpoint.description ?? '—'],
        ]}
      />
      {secret && <SecretOnce label="New signing secret" value={secret} onDone={() => setSecret(null)} />}
      <ErrorNote error={roll.error ?? test.error ?? toggle.error ?? remove.error} />
      {test.isSuccess && <Notice tone="good">Test event sent; it shows under Deliveries in a moment.</Notice>}
      {canWrite && (
        <>
          <Form onSubmit={() => roll.mutate()}>
            <Select label="Keep the old secret signing for" name="grace" value={grace} onChange={(e) => setGrace(e.target.value)} options={GRACES} hint="Deliveries carry both signatures until then, so you can deploy the new secret first." />
            <Submit pending={roll.isPending} variant="secondary">
              Roll the secret
            </Submit>
          </Form>
          <div className="page-actions">
            <button type="button" className="button" disabled={test.isPending} onClick={() => test.mutate()}>
              Send a test event
            </button>
            <button type="button" className="button" disabled={toggle.isPending} onClick={() => toggle.mutate()}>
              {endpoint.enabled ? 'Disable' : 'Enable'}
            </button>
            <button type="button" className="button button-danger" onClick={() => window.confirm('Delete this endpoint? Nothing more is sent to it.') && remove.mutate()}>
              Delete
            </button>
          </div>
        </>
      )}
    </Section>
  );
}

function Edit({ endpoint }: { endpoint: WebhookEndpoint }) {
  const canWrite = useCan('developers:write');
  const invalidate = useInvalidate();
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [types, setTypes] = useState<string[]>(endpoint.event_types);
  const [mode, setMode] = useState(endpoint.mode);
  useEffect(() => {
    setUrl(endpoint.url);
    setDescription(endpoint.description ?? '');
    setTypes(endpoint.event_types);
    setMode(endpoint.mode);
  }, [endpoint]);
  const save = useMutation({
    mutationFn: () =>
      api.patch<WebhookEndpoint>(`/webhook_endpoints/${endpoint.id}`, {
        url: url.trim(),
        event_types: types,
        description: description.trim() || null,
        ...(mode !== endpoint.mode ? { mode } : {}),
      }),
    onSuccess: () => invalidate('/webhook_endpoints'),
  });
  if (!canWrite) return null;
  return (
    <Section title="Edit" id="edit">
      <Form onSubmit={() => save.mutate()}>
        <Field label="Endpoint URL" name="url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        <Field label="Description" name="description" maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
        <Select
          label="Mode"
          name="mode"
          value={mode}
          onChange={(e) => setMode(e.target.value as 'test' | 'live')}
          options={[
            { value: 'test', label: 'Test events' },
            { value: 'live', label: 'Live events' },
          ]}
        />
        <EventTypePicker value={types} onChange={setTypes} />
        <FormError error={save.error} />
        {save.isSuccess && <Notice tone="good">Saved.</Notice>}
        <Submit pending={save.isPending}>Save changes</Submit>
      </Form>
    </Section>
  );
}

function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const canWrite = useCan('developers:write');
  const invalidate = useInvalidate();
  const list = useCursorList<WebhookDelivery>(`/webhook_endpoints/${endpoint.id}/deliveries`, {});
  const resend = useMutation({
    mutationFn: (d: WebhookDelivery) => api.post(`/webhook_endpoints/${endpoint.id}/deliveries/${d.id}/resend`),
    onSuccess: () => setTimeout(() => void invalidate('/webhook_endpoints'), 1500),
  });
  return (
    <Section
      title="Deliveries"
      id="deliveries"
      actions={
        <button type="button" className="button button-small" onClick={() => void list.refetch()}>
          Refresh
        </button>
      }
    >
      <ErrorNote error={list.error ?? resend.error} />
      {resend.isSuccess && <Notice tone="good">Sent again; the new attempt shows in a moment.</Notice>}
      {list.data && list.data.data.length === 0 && <Empty title="Nothing delivered yet">Send a test event to see one.</Empty>}
      <ul className="trail" aria-label="Deliveries">
        {list.data?.data.map((d) => (
          <li key={d.id} className="delivery">
            <Badge status={d.status} tone={d.status === 'succeeded' ? 'good' : d.status === 'pending' || d.status === 'sending' || d.status === 'failed' ? 'wait' : 'bad'} />
            <span>
              <strong>{d.event_type ?? d.event_id}</strong> <span className="muted">{dateTime(d.created_at)}</span>
              {d.next_attempt_at && <span className="muted"> · next try {dateTime(d.next_attempt_at)}</span>}
            </span>
            <div className="detail">
              <table className="table">
                <caption className="visually-hidden">Attempts of delivery {d.id}</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">When</th>
                    <th scope="col">Answer</th>
                    <th scope="col" className="num">
                      Took
                    </th>
                    <th scope="col">Response</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempt_log.map((a) => (
                    <tr key={a.attempt}>
                      <td data-label="Attempt">{a.attempt}</td>
                      <td data-label="When">{dateTime(a.attempted_at)}</td>
                      <td data-label="Answer">{a.status_code !== null ? <Badge tone={a.status_code >= 200 && a.status_code < 300 ? 'good' : 'bad'}>{`HTTP ${a.status_code}`}</Badge> : <Badge tone="bad">No answer</Badge>}</td>
                      <td data-label="Took" className="num">
                        {a.duration_ms === null ? '—' : `${a.duration_ms} ms`}
                      </td>
                      <td data-label="Response">
                        <code>{a.response_excerpt ?? a.error ?? ''}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {canWrite && (
                <button type="button" className="button button-small" disabled={resend.isPending} onClick={() => resend.mutate(d)}>
                  Resend
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
      <Pager {...list.pager} />
    </Section>
  );
}
