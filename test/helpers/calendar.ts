import type { Client } from './http.ts';

/** Posts the calendar page's form as the customer's browser would (no redirect followed). */
export async function postCalendarForm(linkUrl: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(linkUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** Mints a calendar link for the customer (through the API); answers its URL. */
export async function mintCalendarLink(api: Client, customerId: string): Promise<string> {
  const r = await api.post(`/v1/customers/${customerId}/calendar_link`);
  if (r.status !== 201) throw new Error(`calendar link not minted: ${r.status} ${r.text}`);
  return r.body.url;
}

/**
 * Connects a test customer's simulated calendar as the customer does: a calendar link minted
 * through the API, then "Connect the test calendar" on its page. Answers the connection.
 */
export async function connectSimulatedCalendar(api: Client, customerId: string) {
  const url = await mintCalendarLink(api, customerId);
  const posted = await postCalendarForm(url, { connect: 'test' });
  if (posted.status !== 303) throw new Error(`the test calendar was not connected: ${posted.status} ${posted.text.slice(0, 500)}`);
  return (await api.get(`/v1/customers/${customerId}/calendar`)).body;
}
