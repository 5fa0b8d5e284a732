/**
 * A fake Twilio that speaks Twilio's public protocols, for end-to-end tests: the REST API
 * (create, fetch and update a Call; fetch a Recording; Lookup v2 line type and caller type; the
 * number resources of `twilio-numbers.ts`), signed status, recording and caller ID validation callbacks,
 * and Media Streams (it dials our media server as a WebSocket client, like Twilio does for
 * `<Connect><Stream>`). Every request and callback is recorded for assertions; each call can be
 * scripted (`nextCall`). Wall time is short: ringing takes ~150 ms unless scripted.
 *
 * Where it follows Twilio's public documents:
 * - twilio.com/docs/voice/api/call-resource: `Timeout` (seconds to let the call ring, default 60)
 *   is honoured: a callee who does not pick up within it (scaled by `timeScale`) ends `no-answer`;
 *   `MachineDetection` (`Enable`, `DetectMessageEnd`), `AsyncAmd`, `AsyncAmdStatusCallback`
 *   (+ `AsyncAmdStatusCallbackMethod`, POST by default).
 * - twilio.com/docs/voice/answering-machine-detection: without `AsyncAmd` the call's TwiML (the
 *   stream) waits for the verdict; with `AsyncAmd=true` the stream connects at once and the verdict
 *   is posted, signed, to `AsyncAmdStatusCallback` with `CallSid`, `AccountSid`, `AnsweredBy`
 *   (`human`, `machine_start`, `machine_end_beep`, `machine_end_silence`, `machine_end_other`,
 *   `fax`, `unknown`) and `MachineDetectionDuration` (ms). Without `MachineDetection` no verdict
 *   is made and no `AnsweredBy` is sent. `DetectMessageEnd` gives its machine verdict when the
 *   greeting ends (after the beep, or the silence).
 * - twilio.com/docs/voice/media-streams/websocket-messages: the callee's keys arrive as `dtmf`
 *   messages (twilio-media-stream.ts). A machine's callee audio is a greeting (a tone standing in
 *   for speech), then a beep (a 1 kHz tone) for `machine_end_beep`; a fax sends its CNG tone.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { randomHex } from '../../runtime/tokens.ts';
import { mulawToLinear, SILENCE_FRAME_BASE64, toneFrames } from '../../telephony/mulaw.ts';
import { openMediaStream, type MediaStreamHandle } from './twilio-media-stream.ts';
import { createFakeNumbers, type FakeNumbers } from './twilio-numbers.ts';

export interface FakeTwilioOptions {
  accountSid: string;
  authToken: string;
  /** How fast agent audio "plays" before a mark is echoed: 1 = real time (default), Infinity = at once. */
  playbackSpeed?: number;
  /** Wall ms per Twilio ms for the ring `Timeout` (default 0.01: a 30 s Timeout rings 300 ms). */
  timeScale?: number;
}

/** How the callee behaves on the next created call. */
export interface FakeCallScript {
  /** false: the call is never answered and ends with `status`. Default true. */
  answer?: boolean;
  /** Final status of an unanswered call. Default `no-answer`. */
  status?: 'no-answer' | 'busy' | 'failed';
  /**
   * Who picks up, as the AMD verdict names it (sent only when MachineDetection was asked for).
   * Default `human`. Machines play a greeting (and a beep for `machine_end_beep`), a fax its tone.
   */
  answeredBy?: 'human' | 'machine_start' | 'machine_end_beep' | 'machine_end_silence' | 'machine_end_other' | 'fax' | 'unknown';
  /** Wall time from the answer to the AMD verdict, ms. Default: 100 for a person, the greeting's end for a machine. */
  amdDelayMs?: number;
  /** A machine's greeting before its beep or silence, wall ms (default 600). */
  greetingMs?: number;
  /** Keys the callee presses, each `atMs` after the stream starts. */
  dtmf?: { atMs: number; digit: string }[];
  /**
   * Wall time from create until the callee would pick up, ms (default 150). A callee who would
   * pick up after the ring `Timeout` (scaled) never does: the call ends `no-answer` at the Timeout.
   */
  ringMs?: number;
  /** Reported CallDuration (and RecordingDuration) instead of the seconds since answer. */
  durationSeconds?: number;
  /** The callee hangs up this long after answering, ms. */
  calleeHangupAfterMs?: number;
  /** Wall time standing in for TimeLimit, ms (default TimeLimit seconds × 1000); CallDuration is then TimeLimit. */
  timeLimitMs?: number;
  /** μ-law frames (base64) the callee says first; silence follows. */
  calleeAudio?: string[];
  /** The AsyncAmdStatusCallback is lost on the way (the verdict is still made and carried by later status callbacks). */
  loseAmdCallback?: boolean;
  /** Status callbacks of these statuses are lost on the way (never reach the application), as in an outage. */
  loseStatusCallbacks?: string[];
}

/**
 * How Lookup v2 answers for one number, as unkindly as the real service can: a caller type of
 * `null` or `UNDETERMINED` (Twilio's CNAM database knows no type), a line type of `null` with an
 * `error_code` (e.g. 60601, a Canadian number without NPAC access), `tollFree`, `fixedVoip`, any
 * other of its types, or an HTTP error instead of a resource.
 */
export interface FakeLookupScript {
  /** line_type_intelligence.type; null answers no type (with `lineTypeErrorCode`). */
  lineType?: string | null;
  lineTypeErrorCode?: number | null;
  /** caller_name.caller_type (US numbers only, as Twilio answers it). */
  callerType?: 'BUSINESS' | 'CONSUMER' | 'UNDETERMINED' | null;
  callerNameErrorCode?: number | null;
  /** Answer this error (Twilio's error body) instead of the resource. */
  httpError?: { status: number; code: number; message: string };
}

/** One created call, as the fake saw and played it. */
export interface FakeCall {
  sid: string;
  to: string;
  from: string;
  /** The create request's form, every value as a list (StatusCallbackEvent repeats). */
  form: Record<string, string[]>;
  /** `<Stream url>` and its `<Parameter>`s parsed from the Twiml; null when there is none. */
  stream: { url: string; parameters: Record<string, string>; bidirectional: boolean } | null;
  status: string;
  answeredBy: string | null;
  /** When the AMD verdict was made (wall ms), null when none was asked for or made. */
  amdAt: number | null;
  durationSeconds: number | null;
  endReason: 'stream_closed' | 'stream_failed' | 'api_hangup' | 'callee_hangup' | 'time_limit' | 'no_stream' | 'unanswered' | null;
  recordingSid: string | null;
  media: MediaStreamHandle['record'] | null;
  /** Resolves once the last callback of the call was answered (or failed). */
  done: Promise<void>;
}

export interface FakeRequest {
  method: string;
  path: string;
  status: number;
  form: Record<string, string[]>;
  /** The query string (Lookup's `Fields`). */
  query?: URLSearchParams;
}

export interface FakeCallback {
  callSid: string;
  kind: 'status' | 'recording' | 'validation' | 'amd';
  method: 'POST' | 'GET';
  /** The exact URL requested (for GET, with the parameters in its query string). */
  url: string;
  params: Record<string, string>;
  signature: string;
  /** Our server's HTTP status, or null if the request failed (see `error`). */
  status: number | null;
  error?: string;
}

export interface FakeTwilio {
  baseUrl: string;
  calls: FakeCall[];
  requests: FakeRequest[];
  callbacksSent: FakeCallback[];
  /** Numbers bought and released, caller IDs verified; `nextValidation` scripts a verification call. */
  numbers: FakeNumbers;
  nextCall(script: FakeCallScript): void;
  /** Lookup v2 answers `script` for `e164` from now on (instead of the digit rule of `lookupResource`). */
  scriptLookup(e164: string, script: FakeLookupScript): void;
  call(sid: string): FakeCall | undefined;
  /** The callee hangs up now. */
  calleeHangsUp(sid: string): void;
  close(): Promise<void>;
}

const API_VERSION = '2010-04-01';
const INITIATED_MS = 10;
const RINGING_MS = 50;
const DEFAULT_RING_MS = 150;
/** Twilio's default ring Timeout, seconds (call-resource). */
const DEFAULT_TIMEOUT_SECONDS = 60;
const DEFAULT_TIME_SCALE = 0.01;
const HUMAN_AMD_MS = 100;
const DEFAULT_GREETING_MS = 600;
const BEEP_MS = 300;
/** Silence after a greeting before `machine_end_silence` is decided. */
const END_SILENCE_MS = 300;
/** A voice-like tone for a machine's greeting, a 1 kHz beep, a fax's 1100 Hz CNG tone. */
const GREETING_HZ = 300;
const BEEP_HZ = 1000;
const FAX_CNG_HZ = 1100;
const RECORDING_DELAY_MS = 30;
const CALLBACK_TIMEOUT_MS = 15_000;
const FINAL_SIP_CODES: Record<string, string> = { completed: '200', busy: '486', 'no-answer': '487', failed: '500', canceled: '487' };

interface Runtime {
  call: FakeCall;
  script: FakeCallScript;
  answeredAt: number | null;
  ended: boolean;
  sequence: number;
  timers: Set<NodeJS.Timeout>;
  stream: MediaStreamHandle | null;
  chain: Promise<void>;
  resolveDone: () => void;
  agentAudio: Buffer[];
  /** A recording started through Calls/{sid}/Recordings (stopped ones keep what was recorded). */
  recording?: { sid: string; callbackUrl: string | undefined; method: string | undefined; status: 'in-progress' | 'stopped' };
}

export async function startFakeTwilio(options: FakeTwilioOptions): Promise<FakeTwilio> {
  const { accountSid, authToken } = options;
  const calls: FakeCall[] = [];
  const requests: FakeRequest[] = [];
  const callbacksSent: FakeCallback[] = [];
  const scripts: FakeCallScript[] = [];
  const runtimes = new Map<string, Runtime>();
  const lookupScripts = new Map<string, FakeLookupScript>();
  let closed = false;
  let baseUrl = '';

  const apiError = (status: number, code: number, message: string) => ({ status, body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } });
  const notFound = (path: string) => apiError(404, 20404, `The requested resource ${path} was not found`);
  const numbers = createFakeNumbers({
    accountSid,
    apiError,
    sendCallback: (callSid, method, url, params) => void sendCallback(callSid, 'validation', method, url, params),
  });

  function after(rt: Runtime, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      rt.timers.delete(timer);
      if (!closed) fn();
    }, ms);
    rt.timers.add(timer);
  }

  // ---- REST API ----

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path, search = ''] = (req.url ?? '/').split('?');
      const form = formOf(Buffer.concat(chunks).toString('utf8'));
      // A scripted number operation may answer later (FakePurchaseScript.beforeAnswer).
      void Promise.resolve(route(req.method ?? 'GET', path, form, req.headers.authorization, new URLSearchParams(search))).then(({ status, body, contentType }) => {
        requests.push({ method: req.method ?? 'GET', path, status, form, query: new URLSearchParams(search) });
        if (status === 204) {
          res.writeHead(204).end();
        } else if (Buffer.isBuffer(body)) {
          res.writeHead(status, { 'content-type': contentType ?? 'application/octet-stream', 'content-length': body.length });
          res.end(body);
        } else {
          const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
          if (status === 401) headers['www-authenticate'] = 'Basic realm="Twilio API"';
          res.writeHead(status, headers);
          res.end(JSON.stringify(body));
        }
      });
    });
  });

  type Answer = { status: number; body: unknown; contentType?: string };
  function route(method: string, path: string, form: Record<string, string[]>, authorization: string | undefined, query: URLSearchParams): Answer | Promise<Answer> {
    const lookup = /^\/v2\/PhoneNumbers\/([^/]+)$/.exec(path);
    if (lookup) {
      if (!authorized(authorization)) return apiError(401, 20003, 'Authenticate');
      if (method !== 'GET') return apiError(405, 20004, 'Method not allowed');
      const e164 = decodeURIComponent(lookup[1]);
      const scripted = lookupScripts.get(e164);
      if (scripted?.httpError) return apiError(scripted.httpError.status, scripted.httpError.code, scripted.httpError.message);
      return { status: 200, body: lookupResource(e164, (query.get('Fields') ?? '').split(','), scripted) };
    }
    const account = /^\/2010-04-01\/Accounts\/([^/]+)\/((?:AvailablePhoneNumbers|IncomingPhoneNumbers|OutgoingCallerIds)\b.*)$/.exec(path);
    if (account) {
      if (!authorized(authorization) || account[1] !== accountSid) return apiError(401, 20003, 'Authenticate');
      return numbers.route(method, account[2], form, query) ?? notFound(path);
    }
    const callRecordings = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\/([^/]+)\/Recordings(?:\/([^/]+))?\.json$/.exec(path);
    if (callRecordings) {
      if (!authorized(authorization) || callRecordings[1] !== accountSid) return apiError(401, 20003, 'Authenticate');
      const rt = runtimes.get(callRecordings[2]);
      if (!rt || method !== 'POST') return notFound(path);
      return callRecording(rt, callRecordings[3], form);
    }
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/(Calls|Recordings)(?:\/([^/.]+))?\.(json|wav)$/.exec(path);
    if (!m) return notFound(path);
    if (!authorized(authorization) || m[1] !== accountSid) return apiError(401, 20003, 'Authenticate');
    const [, , collection, sid, ext] = m;
    if (collection === 'Calls' && ext === 'json') {
      if (!sid && method === 'POST') return createCall(form);
      const rt = sid ? runtimes.get(sid) : undefined;
      if (!rt) return notFound(path);
      if (method === 'POST') updateCall(rt, one(form, 'Status'));
      if (method === 'POST' || method === 'GET') return { status: 200, body: callResource(rt) };
    }
    if (collection === 'Recordings' && ext === 'wav' && method === 'GET' && sid) {
      const rt = [...runtimes.values()].find((r) => r.call.recordingSid === sid);
      return rt ? { status: 200, body: pcmWav(rt.agentAudio), contentType: 'audio/x-wav' } : notFound(path);
    }
    return apiError(405, 20004, 'Method not allowed');
  }

  /**
   * A Lookup v2 PhoneNumber resource. The line type follows the test-mode rule (the fourth digit
   * from the end: 9 mobile, 8 residential landline, 7 non-fixed VoIP, else a business landline),
   * told the way Twilio tells it: `landline` in line_type_intelligence, BUSINESS or CONSUMER in
   * caller_name (which Twilio answers for US numbers only).
   */
  function lookupResource(e164: string, fields: string[], script?: FakeLookupScript) {
    const digits = e164.replace(/\D/g, '');
    const d = digits[digits.length - 4];
    const type = script && 'lineType' in script ? script.lineType : d === '9' ? 'mobile' : d === '7' ? 'nonFixedVoip' : 'landline';
    const callerType = script && 'callerType' in script ? script.callerType : d === '8' || d === '9' ? 'CONSUMER' : 'BUSINESS';
    const callerName = callerType === 'CONSUMER' ? 'JANE DOE' : callerType === 'BUSINESS' ? 'ACME PLUMBING' : null;
    const us = e164.startsWith('+1');
    return {
      calling_country_code: us ? '1' : null,
      country_code: us ? 'US' : null,
      phone_number: e164,
      national_format: e164,
      valid: true,
      validation_errors: [],
      caller_name: fields.includes('caller_name') && us ? { caller_name: callerName, caller_type: callerType, error_code: script?.callerNameErrorCode ?? null } : null,
      sim_swap: null,
      call_forwarding: null,
      line_status: null,
      line_type_intelligence: fields.includes('line_type_intelligence')
        ? { mobile_country_code: null, mobile_network_code: null, carrier_name: type === null ? null : 'Fake Carrier', type, error_code: script?.lineTypeErrorCode ?? null }
        : null,
      identity_match: null,
      reassigned_number: null,
      sms_pumping_risk: null,
      phone_number_quality_score: null,
      pre_fill: null,
      url: `https://lookups.twilio.com/v2/PhoneNumbers/${encodeURIComponent(e164)}`,
    };
  }

  // Twilio recordings may be public; this fake behaves like an account that requires auth for media.
  function authorized(header: string | undefined): boolean {
    if (!header?.startsWith('Basic ')) return false;
    return Buffer.from(header.slice(6), 'base64').toString('utf8') === `${accountSid}:${authToken}`;
  }

  function createCall(form: Record<string, string[]>) {
    const to = one(form, 'To');
    const from = one(form, 'From');
    if (!to) return apiError(400, 21201, "No 'To' number is specified");
    if (!from) return apiError(400, 21213, "No 'From' number is specified");
    const twiml = one(form, 'Twiml');
    if (!twiml && !one(form, 'Url') && !one(form, 'ApplicationSid')) return apiError(400, 21205, 'Url parameter is required.');
    let resolveDone = () => {};
    const call: FakeCall = {
      sid: `CA${randomHex(16)}`,
      to,
      from,
      form,
      stream: twiml ? parseStream(twiml) : null,
      status: 'queued',
      answeredBy: null,
      amdAt: null,
      durationSeconds: null,
      endReason: null,
      recordingSid: null,
      media: null,
      done: new Promise<void>((r) => (resolveDone = r)),
    };
    const rt: Runtime = { call, script: scripts.shift() ?? {}, answeredAt: null, ended: false, sequence: 0, timers: new Set(), stream: null, chain: Promise.resolve(), resolveDone, agentAudio: [] };
    calls.push(call);
    runtimes.set(call.sid, rt);
    play(rt);
    return { status: 201, body: callResource(rt) };
  }

  /**
   * Calls/{sid}/Recordings create (records an answered call from now on) and
   * Calls/{sid}/Recordings/{sid or Twilio.CURRENT} update with Status=stopped.
   */
  function callRecording(rt: Runtime, recordingSid: string | undefined, form: Record<string, string[]>): Answer {
    if (recordingSid === undefined) {
      if (rt.answeredAt === null || rt.ended) return apiError(400, 21220, 'Call is not in-progress. Cannot create recording.');
      if (rt.recording?.status === 'in-progress') return apiError(400, 21220, 'A recording is already in progress.');
      rt.recording = { sid: `RE${randomHex(16)}`, callbackUrl: one(form, 'RecordingStatusCallback'), method: one(form, 'RecordingStatusCallbackMethod'), status: 'in-progress' };
    } else {
      const current = rt.recording;
      if (!current || (recordingSid !== 'Twilio.CURRENT' && recordingSid !== current.sid)) return notFound(recordingSid);
      if (one(form, 'Status') === 'stopped') current.status = 'stopped';
    }
    const r = rt.recording!;
    return {
      status: recordingSid === undefined ? 201 : 200,
      body: { account_sid: accountSid, call_sid: rt.call.sid, sid: r.sid, status: r.status, channels: Number(one(form, 'RecordingChannels') === 'dual' ? 2 : 1), source: 'StartCallRecordingAPI', api_version: API_VERSION, uri: `/${API_VERSION}/Accounts/${accountSid}/Calls/${rt.call.sid}/Recordings/${r.sid}.json` },
    };
  }

  function updateCall(rt: Runtime, status: string | undefined): void {
    if (rt.ended) return;
    // `completed` hangs up in any state; `canceled` only touches a call not yet answered.
    if (status === 'completed' && rt.answeredAt !== null) endAnswered(rt, 'api_hangup');
    else if ((status === 'completed' || status === 'canceled') && rt.answeredAt === null) giveUp(rt, 'canceled');
  }

  function callResource(rt: Runtime) {
    const { call } = rt;
    const uri = `/${API_VERSION}/Accounts/${accountSid}/Calls/${call.sid}`;
    return {
      account_sid: accountSid,
      annotation: null,
      answered_by: call.answeredBy,
      api_version: API_VERSION,
      caller_name: null,
      date_created: rfc2822(new Date()),
      date_updated: rfc2822(new Date()),
      direction: 'outbound-api',
      duration: call.durationSeconds === null ? null : String(call.durationSeconds),
      end_time: null,
      forwarded_from: null,
      from: call.from,
      from_formatted: call.from,
      group_sid: null,
      parent_call_sid: null,
      phone_number_sid: `PN${randomHex(16)}`,
      price: null,
      price_unit: 'USD',
      queue_time: '0',
      sid: call.sid,
      start_time: rt.answeredAt === null ? null : rfc2822(new Date(rt.answeredAt)),
      status: call.status,
      subresource_uris: { recordings: `${uri}/Recordings.json`, events: `${uri}/Events.json` },
      to: call.to,
      to_formatted: call.to,
      trunk_sid: null,
      uri: `${uri}.json`,
    };
  }

  // ---- the call's life ----

  function play(rt: Runtime): void {
    const { script } = rt;
    after(rt, INITIATED_MS, () => progress(rt, 'initiated'));
    if (script.answer === false && script.status !== 'no-answer' && script.status !== undefined) {
      after(rt, script.ringMs ?? DEFAULT_RING_MS, () => giveUp(rt, script.status ?? 'no-answer'));
      return;
    }
    after(rt, RINGING_MS, () => progress(rt, 'ringing'));
    // The ring Timeout is honoured: nobody picks up after it (call-resource `Timeout`).
    const timeoutSeconds = Number(one(rt.call.form, 'Timeout') ?? DEFAULT_TIMEOUT_SECONDS);
    const timeoutMs = Math.max(timeoutSeconds * 1000 * (options.timeScale ?? DEFAULT_TIME_SCALE), RINGING_MS + 1);
    const pickUpMs = Math.max(script.ringMs ?? DEFAULT_RING_MS, RINGING_MS + 1);
    if (script.answer === false || pickUpMs >= timeoutMs) after(rt, timeoutMs, () => giveUp(rt, 'no-answer'));
    else after(rt, pickUpMs, () => answer(rt));
  }

  function progress(rt: Runtime, status: 'initiated' | 'ringing'): void {
    if (rt.ended) return;
    rt.call.status = status === 'initiated' ? 'queued' : 'ringing';
    if (subscribed(rt, status)) statusCallback(rt, status);
  }

  function answer(rt: Runtime): void {
    if (rt.ended) return;
    const { call, script } = rt;
    rt.answeredAt = Date.now();
    call.status = 'in-progress';
    if (subscribed(rt, 'answered')) statusCallback(rt, 'in-progress');
    const timeLimitSeconds = Number(one(call.form, 'TimeLimit') ?? 14_400);
    after(rt, script.timeLimitMs ?? timeLimitSeconds * 1000, () => endAnswered(rt, 'time_limit'));
    if (script.calleeHangupAfterMs !== undefined) after(rt, script.calleeHangupAfterMs, () => endAnswered(rt, 'callee_hangup'));
    const amd = one(call.form, 'MachineDetection');
    if (amd !== 'Enable' && amd !== 'DetectMessageEnd') return connectStream(rt);
    const verdict = script.answeredBy ?? 'human';
    const asynchronous = one(call.form, 'AsyncAmd') === 'true';
    after(rt, amdDelayMs(script, verdict, amd), () => {
      call.answeredBy = verdict;
      call.amdAt = Date.now();
      if (asynchronous) amdCallback(rt);
      else connectStream(rt); // synchronous AMD: the TwiML runs once the verdict is in
    });
    // Asynchronous AMD: the call is connected at once and the verdict follows.
    if (asynchronous) connectStream(rt);
  }

  /** When the verdict comes: a person soon; DetectMessageEnd waits for a machine's greeting to end. */
  function amdDelayMs(script: FakeCallScript, verdict: string, mode: string): number {
    if (script.amdDelayMs !== undefined) return script.amdDelayMs;
    const greeting = script.greetingMs ?? DEFAULT_GREETING_MS;
    if (mode === 'Enable' && verdict.startsWith('machine')) return HUMAN_AMD_MS;
    if (verdict === 'machine_end_beep') return greeting + BEEP_MS;
    if (verdict === 'machine_end_silence' || verdict === 'machine_end_other') return greeting + END_SILENCE_MS;
    if (verdict === 'machine_start') return greeting / 2;
    return HUMAN_AMD_MS;
  }

  /** What the callee's side sends: the scripted audio, else a machine's greeting (and beep) or a fax's tone. */
  function calleeAudioOf(script: FakeCallScript): string[] {
    if (script.calleeAudio) return script.calleeAudio;
    const who = script.answeredBy ?? 'human';
    const greeting = () => toneFrames(script.greetingMs ?? DEFAULT_GREETING_MS, GREETING_HZ);
    if (who === 'machine_end_beep') return [...greeting(), ...toneFrames(BEEP_MS, BEEP_HZ)];
    if (who.startsWith('machine')) return greeting();
    if (who === 'fax') return [...toneFrames(500, FAX_CNG_HZ), ...Array<string>(150).fill(SILENCE_FRAME_BASE64), ...toneFrames(500, FAX_CNG_HZ)];
    return [];
  }

  /** The `<Connect><Stream>`: the media stream to our server. */
  function connectStream(rt: Runtime): void {
    if (rt.ended) return;
    const { call, script } = rt;
    if (!call.stream) return endAnswered(rt, 'no_stream');
    rt.stream = openMediaStream({
      url: call.stream.url,
      accountSid,
      callSid: call.sid,
      customParameters: call.stream.parameters,
      bidirectional: call.stream.bidirectional,
      playbackSpeed: options.playbackSpeed ?? 1,
      calleeAudio: calleeAudioOf(script),
      dtmf: script.dtmf,
      onAgentAudio: (bytes) => rt.agentAudio.push(bytes),
      onEnd: (opened) => endAnswered(rt, opened ? 'stream_closed' : 'stream_failed'),
    });
    call.media = rt.stream.record;
  }

  /** Ends an answered call: stop the stream, then the final status and the recording callbacks. */
  function endAnswered(rt: Runtime, reason: NonNullable<FakeCall['endReason']>): void {
    if (rt.ended) return;
    finish(rt, reason);
    const { call, script } = rt;
    rt.stream?.stop();
    const timeLimitSeconds = Number(one(call.form, 'TimeLimit') ?? 14_400);
    const seconds = reason === 'time_limit' ? timeLimitSeconds : Math.ceil((Date.now() - (rt.answeredAt ?? Date.now())) / 1000);
    call.durationSeconds = script.durationSeconds ?? seconds;
    call.status = 'completed';
    statusCallback(rt, 'completed');
    // Recorded from the answer (`Record=true`) or from a Calls/{sid}/Recordings create.
    const started = rt.recording;
    if (one(call.form, 'Record') === 'true' || started) {
      call.recordingSid = started?.sid ?? `RE${randomHex(16)}`;
      const url = started ? started.callbackUrl : one(call.form, 'RecordingStatusCallback');
      if (url) after(rt, RECORDING_DELAY_MS, () => recordingCallback(rt, url, started?.method));
      else settle(rt);
    } else settle(rt);
  }

  function giveUp(rt: Runtime, status: 'no-answer' | 'busy' | 'failed' | 'canceled'): void {
    if (rt.ended) return;
    finish(rt, 'unanswered');
    rt.call.status = status;
    rt.call.durationSeconds = 0;
    statusCallback(rt, status);
    settle(rt);
  }

  function finish(rt: Runtime, reason: NonNullable<FakeCall['endReason']>): void {
    rt.ended = true;
    rt.call.endReason = reason;
    for (const timer of rt.timers) clearTimeout(timer);
    rt.timers.clear();
  }

  function settle(rt: Runtime): void {
    rt.chain = rt.chain.then(rt.resolveDone);
  }

  // ---- callbacks ----

  function subscribed(rt: Runtime, event: string): boolean {
    const events = (rt.call.form.StatusCallbackEvent ?? []).flatMap((v) => v.split(/\s+/));
    return events.includes(event);
  }

  /** Final statuses are always reported to StatusCallback (`completed` is the default event). */
  function statusCallback(rt: Runtime, status: string): void {
    const { call } = rt;
    const url = one(call.form, 'StatusCallback');
    if (!url) return;
    const params: Record<string, string> = {
      AccountSid: accountSid,
      ApiVersion: API_VERSION,
      CallSid: call.sid,
      CallStatus: status,
      Called: call.to,
      Caller: call.from,
      CallbackSource: 'call-progress-events',
      Direction: 'outbound-api',
      From: call.from,
      To: call.to,
      SequenceNumber: String(rt.sequence++),
      Timestamp: rfc2822(new Date()),
    };
    if (call.answeredBy && rt.answeredAt !== null) params.AnsweredBy = call.answeredBy;
    if (status in FINAL_SIP_CODES) {
      params.CallDuration = String(call.durationSeconds ?? 0);
      params.Duration = String(Math.ceil((call.durationSeconds ?? 0) / 60));
      params.SipResponseCode = FINAL_SIP_CODES[status];
    }
    const method = one(call.form, 'StatusCallbackMethod') === 'GET' ? 'GET' : 'POST';
    if (rt.script.loseStatusCallbacks?.includes(status)) return;
    rt.chain = rt.chain.then(() => sendCallback(call.sid, 'status', method, url, params));
  }

  /** The asynchronous AMD verdict, signed like every callback (answering-machine-detection). */
  function amdCallback(rt: Runtime): void {
    const { call } = rt;
    const url = one(call.form, 'AsyncAmdStatusCallback');
    if (!url || !call.answeredBy) return;
    const params: Record<string, string> = {
      AccountSid: accountSid,
      CallSid: call.sid,
      AnsweredBy: call.answeredBy,
      MachineDetectionDuration: String(Math.round(((call.amdAt ?? Date.now()) - (rt.answeredAt ?? Date.now())) / (options.timeScale ?? DEFAULT_TIME_SCALE))),
    };
    const method = one(call.form, 'AsyncAmdStatusCallbackMethod') === 'GET' ? 'GET' : 'POST';
    if (rt.script.loseAmdCallback) return;
    rt.chain = rt.chain.then(() => sendCallback(call.sid, 'amd', method, url, params));
  }

  function recordingCallback(rt: Runtime, url: string, startedMethod?: string): void {
    const { call } = rt;
    const params: Record<string, string> = {
      AccountSid: accountSid,
      CallSid: call.sid,
      ErrorCode: '0',
      RecordingChannels: '1',
      RecordingDuration: String(call.durationSeconds ?? 0),
      RecordingSid: call.recordingSid ?? '',
      RecordingSource: 'OutboundAPI',
      RecordingStartTime: rfc2822(new Date(rt.answeredAt ?? Date.now())),
      RecordingStatus: 'completed',
      RecordingTrack: 'both',
      RecordingUrl: `${baseUrl}/${API_VERSION}/Accounts/${accountSid}/Recordings/${call.recordingSid}`,
    };
    const method = (startedMethod ?? one(call.form, 'RecordingStatusCallbackMethod')) === 'GET' ? 'GET' : 'POST';
    rt.chain = rt.chain.then(() => sendCallback(call.sid, 'recording', method, url, params));
    settle(rt);
  }

  /** Signs as Twilio does: HMAC-SHA1 of the URL plus the sorted POST parameters (none for GET). */
  async function sendCallback(callSid: string, kind: FakeCallback['kind'], method: 'POST' | 'GET', url: string, params: Record<string, string>): Promise<void> {
    if (closed) return;
    let target = url;
    let body: string | undefined;
    if (method === 'GET') {
      const u = new URL(url);
      for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v);
      target = u.toString();
    } else {
      body = new URLSearchParams(params).toString();
    }
    const signature = twilio.getExpectedTwilioSignature(authToken, target, method === 'POST' ? params : {});
    const record: FakeCallback = { callSid, kind, method, url: target, params, signature, status: null };
    callbacksSent.push(record);
    try {
      const res = await fetch(target, {
        method,
        body,
        headers: {
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          'x-twilio-signature': signature,
          'i-twilio-idempotency-token': randomHex(16),
          'user-agent': 'TwilioProxy/1.1',
        },
        signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
      });
      record.status = res.status;
      await res.arrayBuffer();
    } catch (err) {
      record.error = err instanceof Error ? err.message : String(err);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    calls,
    requests,
    callbacksSent,
    numbers,
    nextCall: (script) => void scripts.push(script),
    scriptLookup: (e164, script) => void lookupScripts.set(e164, script),
    call: (sid) => runtimes.get(sid)?.call,
    calleeHangsUp(sid) {
      const rt = runtimes.get(sid);
      if (rt && rt.answeredAt !== null) endAnswered(rt, 'callee_hangup');
      else if (rt) giveUp(rt, 'canceled');
    },
    async close() {
      closed = true;
      numbers.close();
      for (const rt of runtimes.values()) {
        for (const timer of rt.timers) clearTimeout(timer);
        rt.stream?.terminate();
        rt.resolveDone();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function formOf(body: string): Record<string, string[]> {
  const form: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) (form[k] ??= []).push(v);
  return form;
}

function one(form: Record<string, string[]>, name: string): string | undefined {
  return form[name]?.[0];
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    out[m[1]] = (m[2] ?? m[3]).replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => XML_ENTITIES[e]);
  }
  return out;
}

/** A tag's attribute text: `>` may appear inside a quoted value. */
const ATTRS = `(?:[^>"']|"[^"]*"|'[^']*')*?`;

/** The `<Stream>` of the TwiML with its `<Parameter>`s; only `<Connect><Stream>` is bidirectional. */
function parseStream(twiml: string): FakeCall['stream'] {
  const m = new RegExp(`<Stream\\b(${ATTRS})(\\/>|>([\\s\\S]*?)<\\/Stream>)`).exec(twiml);
  if (!m) return null;
  const url = attributes(m[1]).url;
  if (!url) return null;
  const parameters: Record<string, string> = {};
  for (const p of (m[3] ?? '').matchAll(new RegExp(`<Parameter\\b(${ATTRS})\\/?>`, 'g'))) {
    const { name, value } = attributes(p[1]);
    if (name) parameters[name] = value ?? '';
  }
  const bidirectional = /<Connect\b[^>]*>\s*<Stream\b/.test(twiml);
  return { url, parameters, bidirectional };
}

function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

/**
 * The recording as Twilio renders `.wav`: 16-bit linear PCM, 8 kHz mono. It holds the agent
 * audio the fake received (one second of silence when there was none).
 */
function pcmWav(mulawChunks: Buffer[]): Buffer {
  const mulaw = mulawChunks.length ? Buffer.concat(mulawChunks) : Buffer.alloc(8000, 0xff);
  const data = Buffer.alloc(mulaw.length * 2);
  for (let i = 0; i < mulaw.length; i++) data.writeInt16LE(mulawToLinear(mulaw[i]), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
