/**
 * The console's calendar panel of a customer's page (issue 24): the connection as GET
 * /v1/customers/{id}/calendar has it, a calendar link shown once, disconnecting; the role decides
 * who may write, and another account's customer is not found.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import { postCalendarForm } from '../helpers/calendar.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => svc?.stop());

test('the calendar panel: not connected, a link the customer connects on, working, disconnected', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const none = await owner.get(`/console/api/customers/${c.id}/calendar?mode=test`);
  t.is(none.status, 200, none.text);
  t.like(none.body, { object: 'calendar_connection', status: 'not_connected' });

  const minted = await owner.post(`/console/api/customers/${c.id}/calendar_link`, { mode: 'test' });
  t.is(minted.status, 201, minted.text);
  t.regex(minted.body.url, /\/calendar\/cal_/);
  t.is((await postCalendarForm(minted.body.url, { connect: 'test' })).status, 303);
  t.like((await owner.get(`/console/api/customers/${c.id}/calendar?mode=test`)).body, { status: 'working', kind: 'simulated', label: 'Test calendar' });

  const off = await owner.delete(`/console/api/customers/${c.id}/calendar?mode=test`);
  t.is(off.status, 200, off.text);
  t.is(off.body.status, 'not_connected');
  const again = await owner.delete(`/console/api/customers/${c.id}/calendar?mode=test`);
  t.is(again.status, 409);
  t.is(again.body.error.code, 'calendar_not_connected');
});

test('a viewer reads the panel but mints and disconnects nothing; another account’s customer is not found', async (t) => {
  const a = await makeAccount(svc.url);
  const other = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  t.is((await viewer.get(`/console/api/customers/${c.id}/calendar?mode=test`)).status, 200);
  t.is((await viewer.post(`/console/api/customers/${c.id}/calendar_link`, { mode: 'test' })).status, 403);
  t.is((await viewer.delete(`/console/api/customers/${c.id}/calendar?mode=test`)).status, 403);
  const stranger = await consoleAs(svc.url, other.id, 'owner');
  t.is((await stranger.get(`/console/api/customers/${c.id}/calendar?mode=test`)).status, 404);
  t.is((await stranger.post(`/console/api/customers/${c.id}/calendar_link`, { mode: 'test' })).status, 404);
});
