import { useEffect, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { SESSION_KEY, useCan } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { Form, Checkbox, Field, FormError, Submit, TextArea } from '../ui/Form.tsx';
import { ErrorNote, Loading, Notice, PageHeader, QueryState, Section } from '../ui/Page.tsx';
import { useInvalidate } from '../ui/data.ts';
import { Markdown } from '../ui/Markdown.tsx';
import { dateTime } from '../ui/format.ts';
import type { Agreement, BusinessDetails, BusinessDetailsFields, GoingLive as GoingLiveData, GoingLiveStep } from '../types.ts';

const STEP_TITLES: Record<GoingLiveStep['key'], string> = {
  business_verification: 'Business verification',
  agreement: 'The agreement',
  funds: 'Funds',
  approval: 'Approval',
};

/** The account's prerequisites for live calls, in order, each with what it waits on. */
export default function GoingLive() {
  const going = useQuery({ queryKey: ['/going_live'], queryFn: () => api.get<GoingLiveData>('/going_live') });
  return (
    <>
      <PageHeader title="Going live" description="What your account needs before it can place live calls, in order." />
      <QueryState query={going}>
        {(g) => (
          <>
            {g.live && <Notice tone="good">Your account is live: live keys, customers and calls are open to you.</Notice>}
            <Section title="Checklist" id="checklist">
              <ol className="steps">
                {g.steps.map((s) => (
                  <li key={s.key} className={s.done ? 'done' : undefined}>
                    <div>
                      <strong>{STEP_TITLES[s.key] ?? s.key}</strong> {s.done ? <Badge tone="good">Done</Badge> : <Badge tone="wait">{s.who === 'you' ? 'Waiting on you' : 'Waiting on the operator'}</Badge>}
                      <p className="muted">{s.detail}</p>
                    </div>
                  </li>
                ))}
              </ol>
            </Section>
            <BusinessDetailsForm />
            <AgreementSection />
          </>
        )}
      </QueryState>
    </>
  );
}

const DETAIL_FIELDS: { name: keyof BusinessDetailsFields; label: string; hint?: string; type?: string; area?: boolean; required?: boolean; max: number }[] = [
  { name: 'legal_name', label: 'Legal name of the business', required: true, max: 200 },
  { name: 'registration_number', label: 'Company registration number', hint: 'As on the register of your country (EIN, Companies House number, …).', required: true, max: 100 },
  { name: 'country', label: 'Country of registration', hint: 'Two letters, such as US or GB.', required: true, max: 2 },
  { name: 'address', label: 'Registered address', area: true, required: true, max: 500 },
  { name: 'website', label: 'Website (optional)', type: 'url', max: 2048 },
  { name: 'contact_email', label: 'Contact email', type: 'email', required: true, max: 254 },
  { name: 'contact_phone', label: 'Contact phone (optional)', type: 'tel', max: 40 },
  { name: 'business_description', label: 'What your business does', hint: 'Who you resell calling to, and for what.', area: true, required: true, max: 2000 },
];

const KYB_WORDS: Record<string, string> = { pending: 'Waiting for the operator’s review', verified: 'Verified', rejected: 'Not accepted' };

function BusinessDetailsForm() {
  const canWrite = useCan('account:write');
  const invalidate = useInvalidate();
  const details = useQuery({ queryKey: ['/business_details'], queryFn: () => api.get<BusinessDetails>('/business_details') });
  const [values, setValues] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!details.data) return;
    const v: Record<string, string> = {};
    for (const f of DETAIL_FIELDS) v[f.name] = details.data.details?.[f.name] ?? '';
    setValues(v);
  }, [details.data]);
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, string | null> = {};
      for (const f of DETAIL_FIELDS) {
        const value = values[f.name]?.trim() ?? '';
        if (value) body[f.name] = f.name === 'country' ? value.toUpperCase() : value;
        else if (!f.required) body[f.name] = null;
      }
      return api.put<BusinessDetails>('/business_details', body);
    },
    onSuccess: () => invalidate('/business_details', '/going_live', SESSION_KEY[0]),
  });
  const d = details.data;
  return (
    <Section title="Business details" id="business-details">
      <p className="muted">The operator reviews these to verify your business. Changing your identity later sends them for review again.</p>
      {d?.submitted && (
        <p>
          <Badge status={d.kyb_status}>{KYB_WORDS[d.kyb_status] ?? d.kyb_status}</Badge>{' '}
          <span className="muted">
            Submitted {dateTime(d.submitted_at)}
            {d.submitted_by ? ` by ${d.submitted_by}` : ''}.
          </span>
        </p>
      )}
      {d?.review_note && <Notice tone="warn">The operator’s note: {d.review_note}</Notice>}
      {details.error ? (
        <ErrorNote error={details.error} />
      ) : !d ? (
        <Loading />
      ) : (
        <Form onSubmit={() => save.mutate()}>
          <fieldset disabled={!canWrite} className="form">
            <legend className="visually-hidden">Business details</legend>
            {DETAIL_FIELDS.map((f) =>
              f.area ? (
                <TextArea key={f.name} label={f.label} hint={f.hint} name={f.name} required={f.required} maxLength={f.max} value={values[f.name] ?? ''} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })} />
              ) : (
                <Field key={f.name} label={f.label} hint={f.hint} name={f.name} type={f.type ?? 'text'} required={f.required} maxLength={f.max} value={values[f.name] ?? ''} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })} />
              ),
            )}
          </fieldset>
          <FormError error={save.error} />
          {save.isSuccess && <Notice tone="good">Saved and sent for review.</Notice>}
          {canWrite ? <Submit pending={save.isPending}>Submit for review</Submit> : <p className="muted">Only an owner or admin can change these.</p>}
        </Form>
      )}
    </Section>
  );
}

function AgreementSection() {
  const canSign = useCan('agreement:sign');
  const invalidate = useInvalidate();
  const [read, setRead] = useState(false);
  const agreement = useQuery({ queryKey: ['/agreement'], queryFn: () => api.get<Agreement>('/agreement') });
  const sign = useMutation({
    mutationFn: (version: string) => api.post('/agreement/sign', { version }),
    onSuccess: () => invalidate('/agreement', '/going_live', SESSION_KEY[0]),
  });
  return (
    <Section title="The agreement" id="agreement">
      <QueryState query={agreement}>
        {(a) => (
          <>
            <p>
              Version <strong>{a.version}</strong>.{' '}
              {a.signed ? (
                <>
                  <Badge tone={a.signed.version === a.version ? 'good' : 'wait'}>{a.signed.version === a.version ? 'Signed' : 'An older version is signed'}</Badge>{' '}
                  <span className="muted">
                    Version {a.signed.version} signed on {dateTime(a.signed.signed_at)}
                    {a.signed.signed_by ? ` by ${a.signed.signed_by}` : ' (recorded by the operator)'}.
                  </span>
                </>
              ) : (
                <Badge tone="wait">Not signed</Badge>
              )}
            </p>
            <div className="agreement-text" tabIndex={0} role="region" aria-label={`Agreement, version ${a.version}`}>
              <Markdown text={a.text} />
            </div>
            {(!a.signed || a.signed.version !== a.version) &&
              (canSign ? (
                <Form onSubmit={() => sign.mutate(a.version)}>
                  <Checkbox label={`I have read version ${a.version} of the agreement and sign it for the business.`} name="read" checked={read} onChange={(e) => setRead(e.target.checked)} required />
                  <FormError error={sign.error} />
                  <Submit pending={sign.isPending}>Sign the agreement</Submit>
                </Form>
              ) : (
                <p className="muted">Only an owner of the account can sign the agreement.</p>
              ))}
          </>
        )}
      </QueryState>
    </Section>
  );
}
