import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Dialog } from './Dialog.tsx';
import { Form, Checkbox, Field, FormError, Select, Submit, formValues } from './Form.tsx';
import { useInvalidate, localInputToIso } from './data.ts';

const CONSENT = [
  { value: 'none', label: 'None' },
  { value: 'requested_call', label: 'Requested call (they asked, in writing, naming the number)' },
  { value: 'prior_express_written', label: 'Prior express written consent' },
  { value: 'prior_express', label: 'Prior express consent' },
  { value: 'existing_business_relationship', label: 'Existing business relationship' },
];

/** Queues a call for a customer (POST /console/api/calls, as POST /v1/calls plus the mode). */
export function PlaceCall({ customerId, isOpen, onClose }: { customerId: string; isOpen: boolean; onClose: () => void }) {
  const mode = useMode();
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const [consent, setConsent] = useState('none');
  const place = useMutation({
    mutationFn: (v: Record<string, string>) => {
      const body: Record<string, unknown> = { mode, customer_id: customerId, phone: v.phone };
      if (v.business_name) body.business_name = v.business_name;
      if (v.external_ref) body.external_ref = v.external_ref;
      if (v.called_party === 'business') body.called_party = 'business';
      if (consent !== 'none') {
        body.consent = { type: consent, obtained_at: localInputToIso(v.obtained_at), source: v.source, evidence_ref: v.evidence_ref };
      }
      return api.post<{ id: string }>('/calls', body);
    },
    onSuccess: (call) => {
      void invalidate('/calls', '/overview');
      onClose();
      navigate(`/calls/${call.id}`);
    },
  });
  return (
    <Dialog title={mode === 'test' ? 'Place a test call' : 'Place a live call'} isOpen={isOpen} onClose={onClose}>
      {mode === 'test' && <p className="muted">A test call dials nobody: it plays out in the simulator, inside the calling window, on the customer's clock.</p>}
      <Form onSubmit={(form) => place.mutate(formValues(form))}>
        <Field label="Number to call" name="phone" type="tel" required hint="In international form, such as +12025550101." autoFocus />
        <Field label="Business called (optional)" name="business_name" maxLength={200} />
        <Field label="Your reference (optional)" name="external_ref" maxLength={255} />
        <Checkbox label="The number is a business line" name="called_party" value="business" />
        <Select label="Consent you hold" name="consent_type" value={consent} onChange={(e) => setConsent(e.target.value)} options={CONSENT} />
        {consent !== 'none' && (
          <>
            <Field label="Obtained at" name="obtained_at" type="datetime-local" required />
            <Field label="Where and how" name="source" required maxLength={500} hint="The form, page or call where it was given." />
            <Field label="Your record of it" name="evidence_ref" required maxLength={255} />
          </>
        )}
        <FormError error={place.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <Submit pending={place.isPending}>Queue the call</Submit>
        </div>
      </Form>
    </Dialog>
  );
}
