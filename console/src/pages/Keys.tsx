import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { KEY_ROTATION_GRACE_MS, KEY_SCOPES } from '../lists.ts';
import { Badge } from '../ui/Badge.tsx';
import { SecretOnce } from '../ui/Copy.tsx';
import { Dialog } from '../ui/Dialog.tsx';
import { Form, Field, FormError, Submit, TextArea } from '../ui/Form.tsx';
import { ErrorNote, Notice, PageHeader } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { useInvalidate } from '../ui/data.ts';
import { date, dateTime } from '../ui/format.ts';
import type { ConsoleApiKey as ApiKey } from '../types.ts';

function keyState(k: ApiKey): { status: string; label: string } {
  if (k.revoked_at) return { status: 'revoked', label: 'Revoked' };
  if (k.expires_at && Date.parse(k.expires_at) < Date.now()) return { status: 'expired', label: 'Expired' };
  return { status: 'active', label: 'Active' };
}

/** API keys of the mode shown: create (scopes, IP allowlist, expiry), the secret once, rotate with 24 hours' grace, revoke. */
export default function Keys() {
  const mode = useMode();
  const canWrite = useCan('developers:write');
  const invalidate = useInvalidate();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ label: string; value: string; graceUntil?: string } | null>(null);
  const rotate = useMutation({
    mutationFn: (k: ApiKey) => api.post<ApiKey>(`/keys/${k.id}/rotate`),
    onSuccess: (k) => {
      setSecret({ label: k.label, value: k.secret ?? '', graceUntil: k.previous_secret_expires_at ?? new Date((k.rotated_at ? Date.parse(k.rotated_at) : Date.now()) + KEY_ROTATION_GRACE_MS).toISOString() });
      void invalidate('/keys');
    },
  });
  const revoke = useMutation({ mutationFn: (k: ApiKey) => api.del(`/keys/${k.id}`), onSuccess: () => invalidate('/keys') });
  return (
    <>
      <PageHeader
        title="API keys"
        description={`Keys of ${mode} mode. Your servers use them to call the API; we keep only a hash of each secret.`}
        actions={
          canWrite && (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              Create key
            </button>
          )
        }
      />
      {secret && (
        <>
          {secret.graceUntil && <Notice tone="info">The key “{secret.label}” has a new secret. The old one keeps working until {dateTime(secret.graceUntil)} (24 hours), so you can deploy the new one first.</Notice>}
          <SecretOnce label="Secret key" value={secret.value} onDone={() => setSecret(null)} />
        </>
      )}
      <ErrorNote error={rotate.error ?? revoke.error} />
      <ListTable<ApiKey>
        path="/keys"
        query={{}}
        paged={false}
        only={(k) => k.mode === mode}
        caption="API keys"
        empty={{ title: `No ${mode} keys`, body: canWrite ? 'Create one with “Create key”.' : undefined }}
        columns={[
          { header: 'Label', cell: (k) => k.label },
          { header: 'Key', cell: (k) => <code>{`${k.prefix}…${k.last_four}`}</code> },
          { header: 'Scopes', cell: (k) => (k.scopes.length === KEY_SCOPES.length ? 'All' : k.scopes.join(', ')) },
          { header: 'IP allowlist', cell: (k) => (k.ip_allowlist?.length ? k.ip_allowlist.join(', ') : 'Any address') },
          { header: 'Expires', cell: (k) => (k.expires_at ? date(k.expires_at) : 'Never') },
          {
            header: 'Status',
            cell: (k) => (
              <>
                <Badge status={keyState(k).status}>{keyState(k).label}</Badge>
                {k.previous_secret_expires_at && !k.revoked_at && Date.parse(k.previous_secret_expires_at) > Date.now() && (
                  <span className="muted"> old secret works until {dateTime(k.previous_secret_expires_at)}</span>
                )}
              </>
            ),
          },
          {
            header: 'Actions',
            cell: (k) =>
              canWrite && !k.revoked_at ? (
                <span className="page-actions">
                  <button type="button" className="button button-small" onClick={() => window.confirm(`Rotate “${k.label}”? The old secret keeps working for 24 hours.`) && rotate.mutate(k)}>
                    Rotate
                  </button>
                  <button type="button" className="button button-small button-danger" onClick={() => window.confirm(`Revoke “${k.label}”? Requests with it are refused at once.`) && revoke.mutate(k)}>
                    Revoke
                  </button>
                </span>
              ) : null,
          },
        ]}
      />
      {canWrite && (
        <CreateKey
          isOpen={creating}
          onClose={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false);
            setSecret({ label: k.label, value: k.secret ?? '' });
          }}
        />
      )}
    </>
  );
}

function CreateKey({ isOpen, onClose, onCreated }: { isOpen: boolean; onClose: () => void; onCreated: (k: ApiKey) => void }) {
  const mode = useMode();
  const invalidate = useInvalidate();
  const [scopes, setScopes] = useState<string[]>([...KEY_SCOPES]);
  const create = useMutation({
    mutationFn: (form: HTMLFormElement) => {
      const data = new FormData(form);
      const ips = String(data.get('ip_allowlist') ?? '')
        .split(/[\s,]+/)
        .filter(Boolean);
      const expires = String(data.get('expires_at') ?? '');
      return api.post<ApiKey>('/keys', {
        mode,
        label: String(data.get('label') ?? '').trim(),
        scopes,
        ...(ips.length ? { ip_allowlist: ips } : {}),
        ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}),
      });
    },
    onSuccess: (k) => {
      void invalidate('/keys');
      onCreated(k);
    },
  });
  return (
    <Dialog title={`Create a ${mode} key`} isOpen={isOpen} onClose={onClose}>
      <Form onSubmit={(form) => create.mutate(form)}>
        <Field label="Label" name="label" required maxLength={100} hint="What uses it, such as “production server”." autoFocus />
        <fieldset>
          <legend>Scopes</legend>
          <div className="checks">
            {KEY_SCOPES.map((s) => (
              <label key={s}>
                <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} />
                <code>{s}</code>
              </label>
            ))}
          </div>
        </fieldset>
        <TextArea label="IP allowlist (optional)" name="ip_allowlist" hint="Addresses or ranges (CIDR), separated by spaces or commas. Empty: any address." rows={2} />
        <Field label="Expires (optional)" name="expires_at" type="date" hint="Empty: never." />
        <FormError error={create.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <Submit pending={create.isPending}>Create key</Submit>
        </div>
      </Form>
    </Dialog>
  );
}
