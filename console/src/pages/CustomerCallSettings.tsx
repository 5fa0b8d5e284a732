import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Field, Form, FormError, Select, Submit, TextArea } from '../ui/Form.tsx';
import { Notice, Section } from '../ui/Page.tsx';
import { useInvalidate } from '../ui/data.ts';
import type { Customer } from '../types.ts';
import { CALL_SETTING_BOUNDS, VOICES } from '../../../actors/customer/call-settings.ts';

const B = CALL_SETTING_BOUNDS;

/** The form's fields, as text, from the customer as the API shows it (settings in force). */
function formOf(customer: Customer) {
  const s = customer.call_settings;
  return {
    registered_name: customer.registered_name ?? '',
    registered_address: customer.registered_address ?? '',
    voice: s.voice as string,
    voicemail_action: s.voicemail.action as string,
    voicemail_message: s.voicemail.message ?? '',
    silence_ms: String(s.turn_detection.silence_ms),
    threshold: String(s.turn_detection.threshold),
    prefix_padding_ms: String(s.turn_detection.prefix_padding_ms),
    backchannel_max_ms: String(s.turn_detection.backchannel_max_ms),
    max_attempts: String(s.retries.max_attempts),
    min_gap_hours: String(s.retries.min_gap_hours),
    inbound_action: (s.inbound.action ?? '') as string,
    on_objection: s.recording.on_objection as string,
  };
}

/** A whole number or decimal typed in a field (the API refuses anything out of bounds, and says so). */
const numberOf = (text: string) => (text.trim() === '' ? null : Number(text));

/**
 * The customer page's "Calls" section (docs/api.md, "Call settings"): the registered name said in
 * each call's identification and the call settings in force, which a person with customers:write
 * changes. Every field is sent; the API's answer (or its error, in its words) is shown.
 */
export function CallSettingsSection({ customer }: { customer: Customer }) {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const invalidate = useInvalidate();
  const [form, setForm] = useState(() => formOf(customer));
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));
  const save = useMutation({
    mutationFn: () =>
      api.patch<Customer>(`/customers/${encodeURIComponent(customer.id)}`, {
        mode,
        registered_name: form.registered_name.trim() === '' ? null : form.registered_name,
        registered_address: form.registered_address.trim() === '' ? null : form.registered_address,
        call_settings: {
          voice: form.voice,
          voicemail: { action: form.voicemail_action, message: form.voicemail_message.trim() === '' ? null : form.voicemail_message },
          turn_detection: {
            silence_ms: numberOf(form.silence_ms),
            threshold: numberOf(form.threshold),
            prefix_padding_ms: numberOf(form.prefix_padding_ms),
            backchannel_max_ms: numberOf(form.backchannel_max_ms),
          },
          retries: { max_attempts: numberOf(form.max_attempts), min_gap_hours: numberOf(form.min_gap_hours) },
          inbound: { action: form.inbound_action === '' ? null : form.inbound_action },
          recording: { on_objection: form.on_objection },
        },
      }),
    // The answer is what is in force now: the form shows it (an emptied field, its default).
    onSuccess: (saved) => {
      setForm(formOf(saved));
      invalidate('/customers');
    },
  });
  const range = (b: { min: number; max: number }, unit: string) => `${b.min} to ${b.max} ${unit}. Empty: the default.`;
  return (
    <Section title="Calls" id="call-settings">
      <p className="muted">What this customer's calls say and do. Empty fields go back to the default.</p>
      <Form onSubmit={() => save.mutate()}>
        <fieldset disabled={!canWrite}>
          <legend>Identification</legend>
          <Field
            label="Registered name"
            name="registered_name"
            maxLength={200}
            autoComplete="off"
            value={form.registered_name}
            onChange={set('registered_name')}
            hint={`The business's registered (legal) name, said when each call opens. Empty: "${customer.name}".`}
          />
          <Field
            label="Registered address"
            name="registered_address"
            maxLength={300}
            autoComplete="off"
            value={form.registered_address}
            onChange={set('registered_address')}
            hint="The business's postal address, on one line. Calls to UK numbers say it (PECR reg. 24) and cannot be made without it unless the caller ID is a UK freephone number. Empty: none."
          />
          <Select label="Voice" name="voice" value={form.voice} onChange={set('voice')} options={VOICES.map((v) => ({ value: v, label: v.charAt(0).toUpperCase() + v.slice(1) }))} />
        </fieldset>
        <fieldset disabled={!canWrite}>
          <legend>Answering machines</legend>
          <Select
            label="At an answering machine"
            name="voicemail_action"
            value={form.voicemail_action}
            onChange={set('voicemail_action')}
            options={[
              { value: 'leave_message', label: 'Leave a message after the beep' },
              { value: 'hang_up', label: 'Hang up' },
            ]}
          />
          <TextArea
            label="Voicemail message"
            name="voicemail_message"
            maxLength={500}
            rows={3}
            value={form.voicemail_message}
            onChange={set('voicemail_message')}
            hint="Up to 500 characters, in the calling language. The registered name and an opt-out number are always added. Empty: the default message."
          />
        </fieldset>
        <fieldset disabled={!canWrite} className="form-row">
          <legend>Turn-taking</legend>
          <Field label="Silence that ends a turn (ms)" name="silence_ms" type="number" step={1} inputMode="numeric" value={form.silence_ms} onChange={set('silence_ms')} hint={range(B.turn_detection.silence_ms, 'ms')} />
          <Field label="Speech threshold" name="threshold" type="number" step={0.01} inputMode="decimal" value={form.threshold} onChange={set('threshold')} hint={`${B.turn_detection.threshold.min} to ${B.turn_detection.threshold.max}; higher ignores more background noise.`} />
          <Field label="Audio kept before speech (ms)" name="prefix_padding_ms" type="number" step={1} inputMode="numeric" value={form.prefix_padding_ms} onChange={set('prefix_padding_ms')} hint={range(B.turn_detection.prefix_padding_ms, 'ms')} />
          <Field label="Short replies that do not interrupt (ms)" name="backchannel_max_ms" type="number" step={1} inputMode="numeric" value={form.backchannel_max_ms} onChange={set('backchannel_max_ms')} hint={`"Mm-hm" shorter than this does not stop the agent. ${range(B.turn_detection.backchannel_max_ms, 'ms')}`} />
        </fieldset>
        <fieldset disabled={!canWrite} className="form-row">
          <legend>Retries</legend>
          <Field label="Attempts per request" name="max_attempts" type="number" step={1} inputMode="numeric" value={form.max_attempts} onChange={set('max_attempts')} hint={`${range(B.retries.max_attempts, 'calls')} 1: never retried.`} />
          <Field label="Hours between attempts" name="min_gap_hours" type="number" step={1} inputMode="numeric" value={form.min_gap_hours} onChange={set('min_gap_hours')} hint={range(B.retries.min_gap_hours, 'hours')} />
        </fieldset>
        <fieldset disabled={!canWrite}>
          <legend>Call-backs and recording</legend>
          <Select
            label="When someone calls back"
            name="inbound_action"
            value={form.inbound_action}
            onChange={set('inbound_action')}
            options={[
              { value: '', label: "Automatic: forward to the customer's phone, else a message" },
              { value: 'forward', label: "Forward to the customer's phone" },
              { value: 'agent', label: 'The agent answers' },
              { value: 'message', label: 'A message: whom they reached, and the opt-out' },
            ]}
          />
          <Select
            label="If the person objects to the recording"
            name="on_objection"
            value={form.on_objection}
            onChange={set('on_objection')}
            options={[
              { value: 'continue_unrecorded', label: 'Stop recording and go on' },
              { value: 'end_call', label: 'End the call' },
            ]}
          />
        </fieldset>
        <FormError error={save.error} />
        {save.isSuccess && <Notice tone="good">Call settings saved.</Notice>}
        {canWrite && <Submit pending={save.isPending}>Save call settings</Submit>}
      </Form>
    </Section>
  );
}
