/**
 * A person calling one of our numbers, as Twilio plays it (Programmable Voice, "Receive an
 * incoming phone call": https://www.twilio.com/docs/voice/tutorials/how-to-respond-to-incoming-phone-calls):
 * Twilio POSTs the number's VoiceUrl (signed with X-Twilio-Signature over the URL and the form:
 * AccountSid, CallSid, From, To, CallStatus=ringing, Direction=inbound, ApiVersion), reads the
 * TwiML answered and runs its verbs in order:
 * - `<Say>` is spoken (recorded here, with its `language`);
 * - `<Dial action><Number>` rings the number (recorded as forwarded); when that leg ends, the
 *   `action` URL is POSTed with DialCallStatus and DialCallDuration and its TwiML runs next (the
 *   verbs after a `<Dial action>` never run: https://www.twilio.com/docs/voice/twiml/dial#action);
 * - `<Gather numDigits action>` plays its nested `<Say>`; digits pressed are POSTed as `Digits`
 *   to `action`, whose TwiML runs next; no digits: the verbs after the Gather run
 *   (https://www.twilio.com/docs/voice/twiml/gather#action);
 * - `<Connect><Stream>` opens a Media Streams WebSocket (twilio-media-stream.ts) with the
 *   `<Parameter>`s; when our server closes it (or the caller hangs up), the call goes on with the
 *   next verb (https://www.twilio.com/docs/voice/twiml/stream);
 * - `<Hangup>` or the end of the TwiML ends the call.
 * Then the number's StatusCallback gets the final `completed` with CallDuration.
 * The number's VoiceUrl and StatusCallback come from the fake's numbers (what the service bought
 * them with), unless the test gives them.
 */
import twilio from 'twilio';
import { randomHex } from '../../runtime/tokens.ts';
import type { FakeTwilio } from './twilio.ts';
import { openMediaStream, type MediaStreamHandle } from './twilio-media-stream.ts';

export interface InboundCallScript {
  from: string;
  to: string;
  /** The voice webhook; default: the VoiceUrl the fake's number `to` was bought with. */
  voiceUrl?: string;
  /** The number's status callback; default: its StatusCallback; none: no final report. */
  statusCallbackUrl?: string;
  /** How the forwarded leg goes (default: not answered). */
  forward?: { status: 'completed' | 'no-answer' | 'busy' | 'failed'; durationSeconds?: number };
  /** Keys the caller presses at a `<Gather>` (default: none). */
  digits?: string;
  /** Keys the caller presses on a `<Connect><Stream>`, sent as Media Streams `dtmf` (default: none). */
  streamDtmf?: { atMs: number; digit: string }[];
  /** The caller hangs up this long after the media stream opened (default: our server ends it). */
  hangUpStreamAfterMs?: number;
  /** CallDuration of the final status callback, seconds. */
  durationSeconds: number;
  /** How the voice webhook is signed (default: properly). */
  signature?: 'valid' | 'none' | 'wrong';
}

export interface InboundStep {
  url: string;
  params: Record<string, string>;
  status: number;
  body: string;
}

export interface InboundCallRecord {
  callSid: string;
  /** Every request made to our server, in order (webhook, actions, status callback). */
  steps: InboundStep[];
  /** What `<Say>` spoke, in order, with its language. */
  said: { text: string; language: string | null }[];
  /** Each `<Dial>`: its attributes and the number it rang. */
  dials: { attributes: Record<string, string>; number: string }[];
  gathers: { attributes: Record<string, string> }[];
  /** The media stream a `<Connect><Stream>` opened. */
  stream: { url: string; parameters: Record<string, string>; handle: MediaStreamHandle } | null;
  /** Agent audio received on the stream, bytes. */
  agentBytes: number;
  hungUp: boolean;
}

const ATTRS = `(?:[^>"']|"[^"]*"|'[^']*')*?`;
const VERB = new RegExp(`<(Say|Dial|Gather|Connect|Hangup|Redirect|Pause)\\b(${ATTRS})(\\/>|>([\\s\\S]*?)<\\/\\1>)`, 'g');

function attributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) out[m[1]] = unescape(m[2]);
  return out;
}

function unescape(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

/** The top-level verbs of a `<Response>` in order. */
export function verbsOf(twiml: string): { verb: string; attributes: Record<string, string>; body: string }[] {
  const inner = /<Response\b[^>]*>([\s\S]*)<\/Response>/.exec(twiml)?.[1] ?? '';
  return [...inner.matchAll(VERB)].map((m) => ({ verb: m[1], attributes: attributes(m[2]), body: m[4] ?? '' }));
}

/** Calls `to` from `from` through the fake Twilio and plays the TwiML our server answers. */
export async function placeInboundCall(fake: FakeTwilio, auth: { accountSid: string; authToken: string }, script: InboundCallScript): Promise<InboundCallRecord> {
  const number = [...fake.numbers.incoming.values()].find((n) => n.phoneNumber === script.to && n.releasedAt === null);
  const voiceUrl = script.voiceUrl ?? number?.form.VoiceUrl?.[0];
  if (!voiceUrl) throw new Error(`the fake has no voice webhook for ${script.to}`);
  const statusCallbackUrl = script.statusCallbackUrl ?? number?.form.StatusCallback?.[0];
  const callSid = `CA${randomHex(16)}`;
  const record: InboundCallRecord = { callSid, steps: [], said: [], dials: [], gathers: [], stream: null, agentBytes: 0, hungUp: false };
  const base = { AccountSid: auth.accountSid, CallSid: callSid, From: script.from, To: script.to, Direction: 'inbound', ApiVersion: '2010-04-01' };

  async function post(url: string, params: Record<string, string>, signature: InboundCallScript['signature'] = 'valid'): Promise<InboundStep> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1', 'i-twilio-idempotency-token': randomHex(16) };
    if (signature === 'valid') headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(auth.authToken, url, params);
    if (signature === 'wrong') headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature('not-the-auth-token', url, params);
    const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
    const step = { url, params, status: res.status, body: await res.text() };
    record.steps.push(step);
    return step;
  }

  /** Runs a TwiML document; resolves when the call has nothing more to do. */
  async function run(twiml: string): Promise<void> {
    for (const { verb, attributes: attrs, body } of verbsOf(twiml)) {
      switch (verb) {
        case 'Say':
          record.said.push({ text: unescape(body.trim()), language: attrs.language ?? null });
          break;
        case 'Pause':
          break;
        case 'Hangup':
          record.hungUp = true;
          return;
        case 'Dial': {
          const numberTo = unescape(/<Number\b[^>]*>([\s\S]*?)<\/Number>/.exec(body)?.[1]?.trim() ?? body.trim());
          record.dials.push({ attributes: attrs, number: numberTo });
          const leg = script.forward ?? { status: 'no-answer' as const };
          if (!attrs.action) break;
          const next = await post(attrs.action, {
            ...base,
            CallStatus: 'in-progress',
            DialCallStatus: leg.status,
            DialCallSid: `CA${randomHex(16)}`,
            ...(leg.status === 'completed' ? { DialCallDuration: String(leg.durationSeconds ?? 0) } : {}),
          });
          return run(next.body);
        }
        case 'Gather': {
          record.gathers.push({ attributes: attrs });
          for (const say of body.matchAll(new RegExp(`<Say\\b(${ATTRS})>([\\s\\S]*?)<\\/Say>`, 'g'))) {
            record.said.push({ text: unescape(say[2].trim()), language: attributes(say[1]).language ?? null });
          }
          if (!script.digits || !attrs.action) break;
          const next = await post(attrs.action, { ...base, CallStatus: 'in-progress', Digits: script.digits.slice(0, Number(attrs.numDigits ?? script.digits.length)) });
          return run(next.body);
        }
        case 'Connect': {
          const s = new RegExp(`<Stream\\b(${ATTRS})(\\/>|>([\\s\\S]*?)<\\/Stream>)`).exec(body);
          if (!s) break;
          const url = attributes(s[1]).url;
          const parameters: Record<string, string> = {};
          for (const p of (s[3] ?? '').matchAll(new RegExp(`<Parameter\\b(${ATTRS})\\/?>`, 'g'))) {
            const a = attributes(p[1]);
            if (a.name) parameters[a.name] = a.value ?? '';
          }
          await new Promise<void>((resolve) => {
            const handle = openMediaStream({
              url,
              accountSid: auth.accountSid,
              callSid,
              customParameters: parameters,
              bidirectional: true,
              playbackSpeed: Infinity,
              calleeAudio: [],
              dtmf: script.streamDtmf,
              onAgentAudio: (mulaw) => (record.agentBytes += mulaw.length),
              onEnd: () => resolve(),
            });
            record.stream = { url, parameters, handle };
            // The caller hangs up: Twilio sends `stop` and the call ends (stop() reports no end).
            if (script.hangUpStreamAfterMs !== undefined) {
              setTimeout(() => {
                handle.stop();
                resolve();
              }, script.hangUpStreamAfterMs).unref();
            }
          });
          break;
        }
        default:
          break;
      }
    }
  }

  const answered = await post(voiceUrl, { ...base, CallStatus: 'ringing' }, script.signature);
  if (answered.status === 200) await run(answered.body);
  if (statusCallbackUrl && answered.status === 200) {
    await post(statusCallbackUrl, { ...base, CallStatus: 'completed', CallDuration: String(script.durationSeconds), Duration: String(Math.ceil(script.durationSeconds / 60)) });
  }
  return record;
}
