import test from 'ava';
import { createLogger } from '../../runtime/logger.ts';
import type { CarrierStatusReport, DialRequest } from '../../telephony/carrier.ts';
import { SimulatedCarrier } from '../../telephony/simulated/simulated-carrier.ts';

const dialRequest = (to: string): DialRequest => ({
  callId: `call-${to}`,
  to,
  from: '+12025550100',
  mediaUrl: 'ws://127.0.0.1:1/media',
  statusCallbackUrl: 'http://x/status',
  recordingCallbackUrl: 'http://x/recording',
  timeLimitSeconds: 1200,
  ringTimeoutSeconds: 30,
});
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a simulated call rings for ringMs, then ends as its number says; releaseRinging ends every ring at once', async (t) => {
  const reports: CarrierStatusReport[] = [];
  const carrier = new SimulatedCarrier({ log: createLogger('silent'), onStatus: (r) => reports.push(r), ringMs: 60_000 });
  const { carrierCallId } = await carrier.dial(dialRequest('+12025550102'));
  await wait(150);
  // Initiated and ringing, then it keeps ringing (no answer comes before 60 s).
  t.deepEqual(reports.map((r) => r.status), ['initiated', 'ringing']);
  t.like(await carrier.fetchStatus('x', carrierCallId), { status: 'ringing' });
  // A call dialled a moment ago (nothing reported yet) reports its progress in order when released.
  await carrier.dial(dialRequest('+12025550112'));
  t.is(carrier.releaseRinging(), 2);
  t.deepEqual(
    reports.map((r) => `${r.callId} ${r.status}`),
    ['call-+12025550102 initiated', 'call-+12025550102 ringing', 'call-+12025550102 no-answer', 'call-+12025550112 initiated', 'call-+12025550112 ringing', 'call-+12025550112 no-answer'],
  );
  t.is(carrier.releaseRinging(), 0, 'nothing rings any more');
  await wait(150);
  t.is(reports.length, 6, 'no timer of a released call fires');
});

test('by default a call rings 80 ms, as the simulated carrier always did', async (t) => {
  const reports: CarrierStatusReport[] = [];
  const carrier = new SimulatedCarrier({ log: createLogger('silent'), onStatus: (r) => reports.push(r) });
  await carrier.dial(dialRequest('+12025550103'));
  await wait(300);
  t.deepEqual(reports.map((r) => r.status), ['initiated', 'ringing', 'busy']);
});
