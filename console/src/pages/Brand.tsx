import { useEffect, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Form, Field, FormError, Submit } from '../ui/Form.tsx';
import { ErrorNote, Loading, Notice, PageHeader, Section } from '../ui/Page.tsx';
import { useInvalidate } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { Brand as BrandData } from '../types.ts';

const FIELDS = ['display_name', 'logo_url', 'primary_color', 'accent_color', 'email_from_name', 'support_email', 'domain'] as const satisfies readonly (keyof BrandData)[];
const HEX = /^#[0-9a-fA-F]{6}$/;

/** Black or white, whichever reads better on `hex`. */
function textOn(hex: string): string {
  if (!HEX.test(hex)) return '#ffffff';
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return l > 0.179 ? '#111111' : '#ffffff';
}

interface DomainStatus {
  object?: 'brand_domain';
  domain: string | null;
  status: 'none' | 'pending' | 'verified' | 'failed';
  cname_target: string | null;
  checked_at: string | null;
  verified_at: string | null;
}

const DOMAIN_WORDS: Record<DomainStatus['status'], string> = {
  none: 'No domain',
  pending: 'Waiting for the CNAME',
  verified: 'Verified: your customers are sent here',
  failed: 'Not pointed at us',
};

/** The brand your customers see: name, logo, colours, emails and domain, with the onboarding page's look previewed as you type. */
export default function Brand() {
  const canWrite = useCan('account:write');
  const invalidate = useInvalidate();
  const brand = useQuery({ queryKey: ['/brand'], queryFn: () => api.get<BrandData & { domain_status?: DomainStatus }>('/brand') });
  const [v, setV] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!brand.data) return;
    const next: Record<string, string> = {};
    for (const f of FIELDS) next[f] = brand.data[f] ?? '';
    setV(next);
  }, [brand.data]);
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, string | null> = {};
      for (const f of FIELDS) body[f] = v[f]?.trim() ? v[f].trim() : null;
      return api.patch<BrandData>('/brand', body);
    },
    onSuccess: () => invalidate('/brand'),
  });
  const check = useMutation({ mutationFn: () => api.post<DomainStatus>('/brand/domain/check') });
  const set = (f: string) => (e: { target: { value: string } }) => setV({ ...v, [f]: e.target.value });
  if (brand.error) return <ErrorNote error={brand.error} />;
  if (!brand.data) return <Loading />;
  const primary = HEX.test(v.primary_color ?? '') ? v.primary_color : '#334155';
  const accent = HEX.test(v.accent_color ?? '') ? v.accent_color : primary;
  const name = v.display_name?.trim() || 'Your brand';
  return (
    <>
      <PageHeader title="Brand" description="What your customers see on onboarding pages, chat pages and emails. Nothing there names us." />
      <div className="split">
        <Section title="Edit" id="edit">
          <Form onSubmit={() => save.mutate()}>
            <fieldset disabled={!canWrite} className="form">
              <legend className="visually-hidden">Brand</legend>
              <Field label="Display name" name="display_name" maxLength={200} value={v.display_name ?? ''} onChange={set('display_name')} />
              <Field label="Logo URL" name="logo_url" type="url" maxLength={2048} hint="An https address of a PNG, JPEG or SVG." value={v.logo_url ?? ''} onChange={set('logo_url')} />
              <div className="form-row">
                <Field label="Primary colour" name="primary_color" hint="#RRGGBB" pattern="#[0-9a-fA-F]{6}" maxLength={7} value={v.primary_color ?? ''} onChange={set('primary_color')} />
                <Field label="Accent colour" name="accent_color" hint="#RRGGBB" pattern="#[0-9a-fA-F]{6}" maxLength={7} value={v.accent_color ?? ''} onChange={set('accent_color')} />
              </div>
              <Field label="Emails come from (name)" name="email_from_name" maxLength={200} value={v.email_from_name ?? ''} onChange={set('email_from_name')} />
              <Field label="Support email" name="support_email" type="email" maxLength={254} value={v.support_email ?? ''} onChange={set('support_email')} />
              <Field
                label="Domain"
                name="domain"
                maxLength={253}
                hint="The domain your customers use you at, such as calls.example.com. Point it at this service with a CNAME; onboarding and chat links then use it."
                value={v.domain ?? ''}
                onChange={set('domain')}
              />
            </fieldset>
            <FormError error={save.error} />
            {save.isSuccess && <Notice tone="good">Brand saved.</Notice>}
            {canWrite && <Submit pending={save.isPending}>Save brand</Submit>}
          </Form>
          {brand.data.domain && (
            <div className="domain-check">
              <h3>Domain</h3>
              <DomainState status={check.data ?? brand.data.domain_status ?? null} />
              {canWrite && (
                <button type="button" className="button" disabled={check.isPending} onClick={() => check.mutate()}>
                  Check {brand.data.domain} now
                </button>
              )}
              <ErrorNote error={check.error} />
            </div>
          )}
        </Section>
        <Section title="Preview of the onboarding page" id="preview">
          <div className="brand-preview" aria-label="Preview of the onboarding page with this brand" role="img">
            <BrandPreview name={name} logo={v.logo_url?.trim() || null} primary={primary} accent={accent} />
          </div>
          <p className="muted">As your customers see the page that asks them to accept the calling terms.</p>
        </Section>
      </div>
    </>
  );
}

function DomainState({ status }: { status: DomainStatus | null }) {
  if (!status) return null;
  return (
    <>
      <p>
        <Badge status={status.status === 'verified' ? 'verified' : status.status === 'failed' ? 'failed' : 'pending'}>{DOMAIN_WORDS[status.status]}</Badge>
        {status.checked_at && <span className="muted"> Checked {dateTime(status.checked_at)}.</span>}
      </p>
      {status.cname_target && status.status !== 'verified' && (
        <p>
          Add a DNS record: <code>{status.domain}</code> CNAME <code>{status.cname_target}</code>
        </p>
      )}
    </>
  );
}

function BrandPreview({ name, logo, primary, accent }: { name: string; logo: string | null; primary: string; accent: string }) {
  const header = { background: primary, color: textOn(primary) };
  const button = { background: accent, color: textOn(accent) };
  return (
    <>
      <div className="brand-preview-header" style={header}>
        {logo && /^https:\/\//.test(logo) && <img src={logo} alt="" />}
        <strong>{name}</strong>
      </div>
      <div className="brand-preview-body">
        <p>
          <strong>Calling terms for Bright Dental</strong>
        </p>
        <p className="muted">{name} may place outbound calls for your business. Read the terms and accept them to start.</p>
        <span className="brand-preview-button" style={button}>
          I accept
        </span>
      </div>
    </>
  );
}
