import { useMutation, useQuery } from '@tanstack/react-query';
import type { Static } from 'typebox';
import { api } from '../api.ts';
import { useCan, useMode } from '../app/session.tsx';
import { Badge } from '../ui/Badge.tsx';
import { CopyField } from '../ui/Copy.tsx';
import { Field, Form, FormError, formValues, Submit } from '../ui/Form.tsx';
import { Facts, Notice, QueryState, Section } from '../ui/Page.tsx';
import { useInvalidate } from '../ui/data.ts';
import { dateTime } from '../ui/format.ts';
import type { CalendarConnectionSchema, CalendarLinkSchema } from '../../../http/schemas/calendar.ts';

type CalendarConnection = Static<typeof CalendarConnectionSchema>;
type CalendarLink = Static<typeof CalendarLinkSchema>;

const KIND: Record<string, string> = { caldav: 'Calendar address (CalDAV)', google: 'Google Calendar', microsoft: 'Microsoft 365', simulated: 'Simulated test calendar' };
const STATUS: Record<CalendarConnection['status'], { label: string; tone: 'good' | 'bad' | 'neutral' }> = {
  working: { label: 'Working', tone: 'good' },
  failing: { label: 'Stopped working', tone: 'bad' },
  not_connected: { label: 'Not connected', tone: 'neutral' },
};

/**
 * The customer's calendar (issue 24): whether it is connected and working, why it stopped, a
 * calendar link to send the customer (shown once), and disconnecting it.
 */
export function CalendarSection({ customerId }: { customerId: string }) {
  const mode = useMode();
  const canWrite = useCan('customers:write');
  const invalidate = useInvalidate();
  const path = `/customers/${encodeURIComponent(customerId)}`;
  const connection = useQuery({ queryKey: ['/customers', customerId, 'calendar', mode], queryFn: () => api.get<CalendarConnection>(`${path}/calendar`, { mode }) });
  // With an address, the link is also emailed to the customer in your brand.
  const mint = useMutation({ mutationFn: (email?: string) => api.post<CalendarLink>(`${path}/calendar_link`, email ? { mode, email } : { mode }) });
  const disconnect = useMutation({
    mutationFn: () => api.del<CalendarConnection>(`${path}/calendar`, { mode }),
    onSuccess: () => invalidate('/customers'),
  });
  return (
    <Section
      title="Calendar"
      id="calendar"
      actions={
        canWrite && (
          <button type="button" className="button" disabled={mint.isPending} onClick={() => mint.mutate(undefined)}>
            Create calendar link
          </button>
        )
      }
    >
      <p className="muted">
        Your customer connects its calendar on the link: meetings are then offered only when it is free and written to its calendar. A new link replaces the one
        before it.
      </p>
      <QueryState query={connection} what="Loading the calendar">
        {(c) => (
          <>
            <Facts
              items={[
                ['Status', <Badge key="status" tone={STATUS[c.status].tone}>{STATUS[c.status].label}</Badge>],
                ['Calendar', c.kind ? `${KIND[c.kind] ?? c.kind}${c.label ? ` · ${c.label}` : ''}` : '—'],
                ['Connected', c.connected_at ? dateTime(c.connected_at) : '—'],
                ['Last checked', c.checked_at ? dateTime(c.checked_at) : '—'],
              ]}
            />
            {c.failure && (
              <Notice tone="warn">
                The connection stopped working: {c.failure.message}. No times are offered from it until your customer connects it again: send them a calendar link.
              </Notice>
            )}
            {canWrite && c.status !== 'not_connected' && (
              <p>
                <button
                  type="button"
                  className="button button-small button-danger"
                  disabled={disconnect.isPending}
                  onClick={() => window.confirm('Disconnect this calendar? Meetings will no longer be checked against it or written to it.') && disconnect.mutate()}
                >
                  Disconnect
                </button>
              </p>
            )}
          </>
        )}
      </QueryState>
      {canWrite && (
        <Form onSubmit={(form) => mint.mutate(formValues(form).email)}>
          <Field label="Email the calendar link to" name="email" type="email" required autoComplete="off" hint="Your customer's address: the link is emailed in your brand, from you." />
          <Submit pending={mint.isPending} variant="secondary">
            Send calendar link
          </Submit>
        </Form>
      )}
      <FormError error={mint.error ?? disconnect.error} />
      {mint.data?.emailed_to && <Notice tone="good">Emailed to {mint.data.emailed_to}.</Notice>}
      {mint.data?.url && (
        <Notice tone="info">
          {mint.data.emailed_to ? 'Your copy of the link.' : 'Send this link to your customer.'} It is shown only now and works for 7 days:
          <CopyField label="Calendar link" value={mint.data.url} />
        </Notice>
      )}
    </Section>
  );
}
