import { useState } from 'react';
import { Link } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { SecretOnce } from '../ui/Copy.tsx';
import { Dialog } from '../ui/Dialog.tsx';
import { EventTypePicker } from '../ui/EventTypePicker.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import { PageHeader } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { useInvalidate } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { WebhookEndpoint } from '../types.ts';

/** Webhook endpoints of the mode shown; creating one shows its signing secret once. */
export default function Webhooks() {
  const mode = useMode();
  const canWrite = useCan('developers:write');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<WebhookEndpoint | null>(null);
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={`Where we send ${mode} events, signed with each endpoint's secret.`}
        actions={
          canWrite && (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              Add endpoint
            </button>
          )
        }
      />
      {created?.secret && (
        <>
          <p>
            Endpoint <Link to={`/developers/webhooks/${created.id}`}>{created.url}</Link> added. Verify each delivery's signature with this secret:
          </p>
          <SecretOnce label="Signing secret" value={created.secret} onDone={() => setCreated(null)} />
        </>
      )}
      <ListTable<WebhookEndpoint>
        path="/webhook_endpoints"
        query={{ mode }}
        paged={false}
        caption="Webhook endpoints"
        empty={{ title: `No ${mode} endpoints`, body: canWrite ? 'Add one with “Add endpoint”.' : undefined }}
        columns={[
          { header: 'URL', cell: (e) => <Link to={`/developers/webhooks/${e.id}`}>{e.url}</Link> },
          { header: 'Events', cell: (e) => (e.event_types.length ? e.event_types.join(', ') : 'All') },
          { header: 'Status', cell: (e) => (e.enabled ? <Badge tone="good">Enabled</Badge> : <Badge tone="bad">Disabled</Badge>) },
          { header: 'Created', cell: (e) => dateTime(e.created_at) },
        ]}
      />
      {canWrite && (
        <CreateEndpoint
          isOpen={creating}
          onClose={() => setCreating(false)}
          onCreated={(e) => {
            setCreating(false);
            setCreated(e);
          }}
        />
      )}
    </>
  );
}

function CreateEndpoint({ isOpen, onClose, onCreated }: { isOpen: boolean; onClose: () => void; onCreated: (e: WebhookEndpoint) => void }) {
  const mode = useMode();
  const invalidate = useInvalidate();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: () => api.post<WebhookEndpoint>('/webhook_endpoints', { mode, url: url.trim(), event_types: types, ...(description.trim() ? { description: description.trim() } : {}) }),
    onSuccess: (e) => {
      setUrl('');
      setDescription('');
      setTypes([]);
      void invalidate('/webhook_endpoints');
      onCreated(e);
    },
  });
  return (
    <Dialog title={`Add a ${mode} endpoint`} isOpen={isOpen} onClose={onClose}>
      <Form onSubmit={() => create.mutate()}>
        <Field label="Endpoint URL" name="url" type="url" required hint="An https address of your server that answers 2xx." value={url} onChange={(e) => setUrl(e.target.value)} autoFocus />
        <Field label="Description (optional)" name="description" maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
        <EventTypePicker value={types} onChange={setTypes} />
        <FormError error={create.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <Submit pending={create.isPending}>Add endpoint</Submit>
        </div>
      </Form>
    </Dialog>
  );
}
