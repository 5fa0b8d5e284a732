import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Field, Form, FormError, Submit } from '../ui/Form.tsx';
import { Notice, Section } from '../ui/Page.tsx';
import { useInvalidate } from '../ui/data.ts';
import type { Customer } from '../types.ts';
import { BOOKING_BOUNDS, WEEKDAYS, type Weekday } from '../../../actors/customer/booking-settings.ts';

const DAY_NAMES: Record<Weekday, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };
const NUMBER_FIELDS = ['meeting_minutes', 'buffer_minutes', 'min_notice_minutes', 'max_days_ahead'] as const;

/** A weekday's spans as typed: "09:00–12:00, 13:00–17:00"; empty: closed. */
const spansText = (spans: { start: string; end: string }[]) => spans.map((s) => `${s.start}–${s.end}`).join(', ');

/** The text read back into spans; a piece that is not "HH:MM–HH:MM" is sent as typed for the API to refuse in its words. */
function spansOf(text: string): { start: string; end: string }[] {
  return text
    .split(',')
    .map((piece) => piece.trim())
    .filter(Boolean)
    .map((piece) => {
      const [start = '', end = ''] = piece.split(/\s*[-–—]\s*/);
      return { start, end };
    });
}

function formOf(customer: Customer) {
  const b = customer.booking;
  return {
    ...(Object.fromEntries(WEEKDAYS.map((d) => [d, spansText(b.business_hours[d])])) as Record<Weekday, string>),
    meeting_minutes: String(b.meeting_minutes),
    buffer_minutes: String(b.buffer_minutes),
    min_notice_minutes: String(b.min_notice_minutes),
    max_days_ahead: String(b.max_days_ahead),
  };
}

const numberOf = (text: string) => (text.trim() === '' ? null : Number(text));

/**
 * The customer page's "Booking" section (docs/api.md, "Booking settings"): when the business takes
 * meetings, in its time zone, and the rules the agent books by. Every field is sent; the API's
 * answer (or its error, in its words) is shown.
 */
export function BookingSection({ customer }: { customer: Customer }) {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const invalidate = useInvalidate();
  const [form, setForm] = useState(() => formOf(customer));
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));
  const save = useMutation({
    mutationFn: () =>
      api.patch<Customer>(`/customers/${encodeURIComponent(customer.id)}`, {
        mode,
        booking: {
          business_hours: Object.fromEntries(WEEKDAYS.map((d) => [d, spansOf(form[d])])),
          ...Object.fromEntries(NUMBER_FIELDS.map((k) => [k, numberOf(form[k])])),
        },
      }),
    onSuccess: (saved) => {
      setForm(formOf(saved));
      invalidate('/customers');
    },
  });
  const B = BOOKING_BOUNDS;
  return (
    <Section title="Booking" id="booking">
      <p className="muted">When the agent may book meetings for this customer, in its time zone ({customer.timezone}). Empty number fields go back to the default.</p>
      <Form onSubmit={() => save.mutate()}>
        <fieldset disabled={!canWrite}>
          <legend>Business hours</legend>
          {WEEKDAYS.map((d) => (
            <Field key={d} label={DAY_NAMES[d]} name={`hours_${d}`} autoComplete="off" value={form[d]} onChange={set(d)} hint={d === 'mon' ? 'Times as 09:00–17:00; several separated by commas (09:00–12:00, 13:00–17:00). Empty: closed.' : undefined} />
          ))}
        </fieldset>
        <fieldset disabled={!canWrite} className="form-row">
          <legend>Meetings</legend>
          <Field label="Meeting length (minutes)" name="meeting_minutes" type="number" step={1} inputMode="numeric" value={form.meeting_minutes} onChange={set('meeting_minutes')} hint={`${B.meeting_minutes.min} to ${B.meeting_minutes.max}. Default 30.`} />
          <Field label="Gap around meetings (minutes)" name="buffer_minutes" type="number" step={1} inputMode="numeric" value={form.buffer_minutes} onChange={set('buffer_minutes')} hint={`${B.buffer_minutes.min} to ${B.buffer_minutes.max}. Default 15.`} />
          <Field label="Soonest booking (minutes ahead)" name="min_notice_minutes" type="number" step={1} inputMode="numeric" value={form.min_notice_minutes} onChange={set('min_notice_minutes')} hint={`${B.min_notice_minutes.min} to ${B.min_notice_minutes.max}. Default 120.`} />
          <Field label="Furthest booking (days ahead)" name="max_days_ahead" type="number" step={1} inputMode="numeric" value={form.max_days_ahead} onChange={set('max_days_ahead')} hint={`${B.max_days_ahead.min} to ${B.max_days_ahead.max}. Default 30.`} />
        </fieldset>
        <FormError error={save.error} />
        {save.isSuccess && <Notice tone="good">Booking settings saved.</Notice>}
        {canWrite && <Submit pending={save.isPending}>Save booking settings</Submit>}
      </Form>
    </Section>
  );
}
