/**
 * A fake Stripe that speaks Stripe's public protocol, for tests: a real HTTP server (port 0) with
 * the REST endpoints this service uses (Customers, Checkout Sessions, PaymentIntents, Charges,
 * Refunds, PaymentMethods), a hosted checkout page standing in for checkout.stripe.com, and
 * webhooks signed as Stripe signs them.
 *
 * Faithful where a client can tell: form-encoded bodies in Stripe's bracket notation
 * (`metadata[k]`, `line_items[0][price_data][unit_amount]`, `expand[]` / `expand[0]`), Bearer
 * (or Basic) secret-key auth, `Idempotency-Key` (the same key and parameters replay the first
 * answer with `Idempotent-Replayed: true`; the same key with other parameters is a 400
 * `idempotency_error`), Stripe's error shape and statuses (402 card errors, 400
 * invalid_request_error, 404 resource_missing, 401 bad key), `expand[]` of ids into objects,
 * and Stripe's test cards (payments/test-cards.ts) deciding every payment.
 *
 * Webhooks: each event is POSTed as pretty-printed JSON to the endpoint URL with
 * `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<payload>" keyed by the whsec_ secret>`
 * and retried (a few times, quickly) while the endpoint answers anything but 2xx. Tests can hold
 * events back and release them (in order or reversed), have each delivered twice, late, with a
 * wrong signature or a stale timestamp, redeliver one, fail API requests with 500/429, and read
 * logs of the requests received and the deliveries made.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkCardFields, chargeOutcome, type CardError, type CheckedCard } from '../../payments/test-cards.ts';

export const FAKE_STRIPE_API_VERSION = '2026-10-28.endive';

export interface FakeStripeOptions {
  secretKey?: string;
  publishableKey?: string;
  webhookSecret?: string;
  /** Where events are POSTed (settable later with setWebhookUrl); null: events are only recorded. */
  webhookUrl?: string | null;
  /** Webhook attempts per event while the endpoint fails (Stripe retries for days; the fake quickly). Default 4. */
  webhookAttempts?: number;
  /** Wall time between webhook attempts, ms. Default 100. */
  webhookRetryMs?: number;
}

/** How events are delivered while the script is set (scriptDeliveries). */
export interface DeliveryScript {
  /** Each event is delivered twice (Stripe's at-least-once delivery). */
  twice?: boolean;
  /** Wall time before each delivery, ms (a late webhook). */
  delayMs?: number;
  /** `wrong`: signed with another secret; `stale`: signed with a timestamp 10 minutes old (outside Stripe's 300 s tolerance). */
  signature?: 'wrong' | 'stale';
}

export interface FakeRequestLog {
  method: string;
  path: string;
  /** The parsed parameters (body for POST, query for GET). */
  params: Record<string, any>;
  idempotencyKey: string | null;
  status: number;
  at: Date;
}

export interface FakeDeliveryLog {
  eventId: string;
  type: string;
  attempt: number;
  /** The endpoint's status, or 0 when it could not be reached. */
  status: number;
  signature: string;
  at: Date;
}

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: Record<string, any> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface FakeCard {
  number: string;
  exp_month: number | string;
  exp_year: number | string;
  cvc: string;
}

export interface FakeStripe {
  /** http://127.0.0.1:<port>: the SDK's host, port and protocol (STRIPE_API_BASE). */
  readonly url: string;
  readonly secretKey: string;
  readonly publishableKey: string;
  readonly webhookSecret: string;
  setWebhookUrl(url: string | null): void;
  /** Every API request received (not the hosted page), oldest first. */
  readonly requests: FakeRequestLog[];
  /** Every event created, oldest first. */
  readonly events: StripeEvent[];
  /** Every webhook attempt, oldest first. */
  readonly deliveries: FakeDeliveryLog[];
  /** Stripe's objects by id (customers, sessions, payment intents, charges, payment methods, refunds). */
  object(id: string): Record<string, any> | undefined;
  objectsOf(kind: string): Record<string, any>[];
  /** The next `times` (default 1) API requests matching `path` (substring or pattern) and `method` answer `status` without doing anything. */
  failNext(f: { status: 500 | 429 | 503; path?: string | RegExp; method?: string; times?: number }): void;
  /** Events from now on are kept back until releaseEvents. */
  holdEvents(): void;
  /** Sends the held events (reversed: newest first) and stops holding; resolves when they are delivered. */
  releaseEvents(o?: { reverse?: boolean }): Promise<void>;
  /** How every event is delivered from now on; null: normally. */
  scriptDeliveries(script: DeliveryScript | null): void;
  /** Sends one event again (as Stripe's "resend"), answering the endpoint's status. */
  redeliver(eventId: string, script?: DeliveryScript): Promise<number>;
  /** Resolves when no delivery is waiting or in flight (held events excepted). */
  settled(): Promise<void>;
  /**
   * From now on the bank answers charges of this saved card as it would the test card `number`
   * (e.g. 4000000000009995: insufficient funds): a card that was fine when saved and is refused later.
   */
  cardBehavesAs(paymentMethodId: string, number: string): void;
  /** Pays a checkout session through its hosted page (POST /pay/:id), as a person would. */
  pay(sessionId: string, card: FakeCard): Promise<{ status: number; location: string | null; body: string }>;
  /** The `Stripe-Signature` header Stripe would send for a payload. */
  signatureHeader(payload: string, o?: { timestamp?: number; secret?: string }): string;
  close(): Promise<void>;
}

class StripeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, any>,
  ) {
    super(body.message);
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function randomId(prefix: string, length = 24): string {
  let out = '';
  for (const b of crypto.randomBytes(length * 2)) if (b < 248 && out.length < length) out += BASE62[b % 62];
  return prefix + out;
}

const unix = () => Math.floor(Date.now() / 1000);

function invalid(message: string, o: { code?: string; param?: string; status?: number } = {}): StripeHttpError {
  return new StripeHttpError(o.status ?? 400, {
    type: 'invalid_request_error',
    ...(o.code ? { code: o.code, doc_url: `https://stripe.com/docs/error-codes/${o.code.replace(/_/g, '-')}` } : {}),
    message,
    ...(o.param ? { param: o.param } : {}),
  });
}

const missingParam = (param: string) => invalid(`Missing required param: ${param}.`, { code: 'parameter_missing', param });
const noSuch = (what: string, id: string, param: string, status = 400) =>
  invalid(`No such ${what}: '${id}'`, { code: 'resource_missing', param, status });

/**
 * Stripe's form encoding into nested values: `a[b]=1` → {a:{b:'1'}}, `a[0][c]=2` → {a:[{c:'2'}]},
 * `a[]=x&a[]=y` → {a:['x','y']}.
 */
export function parseStripeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    const path = m ? [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!)] : [key];
    let node: any = root;
    for (let i = 0; i < path.length; i++) {
      let seg = path[i]!;
      const last = i === path.length - 1;
      if (seg === '') seg = String(Object.keys(node).length);
      if (last) node[seg] = value;
      else node = node[seg] ??= {};
    }
  }
  const arrays = (v: any): any => {
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v);
    for (const k of keys) v[k] = arrays(v[k]);
    if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) return keys.sort((a, b) => Number(a) - Number(b)).map((k) => v[k]);
    return v;
  };
  return arrays(root);
}

function stable(v: any): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
    .join(',')}}`;
}

function intParam(params: Record<string, any>, name: string, o: { required?: boolean } = {}): number | null {
  const raw = params[name];
  if (raw === undefined || raw === '') {
    if (o.required) throw missingParam(name);
    return null;
  }
  if (!/^-?\d+$/.test(String(raw))) throw invalid(`Invalid integer: ${raw}`, { param: name });
  return Number(raw);
}

function boolParam(params: Record<string, any>, name: string): boolean {
  const raw = params[name];
  if (raw === undefined || raw === '') return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw invalid(`Invalid boolean: ${raw}`, { param: name });
}

function metadataParam(params: Record<string, any>, name = 'metadata'): Record<string, string> {
  const raw = params[name];
  if (raw === undefined || raw === '') return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('Invalid object', { param: name });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw invalid('Invalid metadata value', { param: `${name}[${k}]` });
    if (v !== '') out[k] = v;
  }
  return out;
}

/** Stripe refuses a parameter it does not know (`Received unknown parameter: x`); `shape` lists the known ones, nested for objects. */
type Shape = { [name: string]: true | Shape | [Shape] };
function knownParams(value: Record<string, any>, shape: Shape, prefix = ''): void {
  for (const [k, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}[${k}]` : k;
    const known = shape[k];
    if (!known) throw invalid(`Received unknown parameter: ${name}`, { code: 'parameter_unknown', param: name });
    if (known === true || v === null || typeof v !== 'object') continue;
    if (Array.isArray(known)) (Array.isArray(v) ? v : Object.values(v)).forEach((item: any, i: number) => item && typeof item === 'object' && knownParams(item, known[0], `${name}[${i}]`));
    else if (!Array.isArray(v)) knownParams(v, known, name);
  }
}

const CUSTOMER_PARAMS: Shape = { name: true, email: true, description: true, metadata: true, phone: true, expand: true, invoice_settings: { default_payment_method: true } };
const SESSION_PARAMS: Shape = {
  mode: true, customer: true, customer_email: true, client_reference_id: true, success_url: true, cancel_url: true, metadata: true, locale: true, expires_at: true,
  payment_method_types: true, expand: true, submit_type: true,
  line_items: [{ quantity: true, price_data: { currency: true, unit_amount: true, product_data: { name: true, description: true } } }],
  payment_intent_data: { setup_future_usage: true, metadata: true, description: true, receipt_email: true, statement_descriptor_suffix: true },
};
const INTENT_PARAMS: Shape = {
  amount: true, currency: true, customer: true, payment_method: true, off_session: true, confirm: true, metadata: true, description: true,
  setup_future_usage: true, payment_method_types: true, receipt_email: true, statement_descriptor_suffix: true, expand: true,
};
const REFUND_PARAMS: Shape = { payment_intent: true, charge: true, amount: true, metadata: true, reason: true, expand: true };
const READ_PARAMS: Shape = { expand: true };

function expandList(params: Record<string, any>): string[] {
  const e = params.expand;
  if (e === undefined) return [];
  return (Array.isArray(e) ? e : [e]).map(String);
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export async function startFakeStripe(opts: FakeStripeOptions = {}): Promise<FakeStripe> {
  const secretKey = opts.secretKey ?? `sk_test_${randomId('', 32)}`;
  const publishableKey = opts.publishableKey ?? `pk_test_${randomId('', 32)}`;
  const webhookSecret = opts.webhookSecret ?? `whsec_${randomId('', 32)}`;
  let webhookUrl = opts.webhookUrl ?? null;
  const attempts = opts.webhookAttempts ?? 4;
  const retryMs = opts.webhookRetryMs ?? 100;

  const objects = new Map<string, Record<string, any>>();
  /** What Stripe keeps of a session but does not show: its line items and payment_intent_data. */
  const sessionExtras = new Map<string, { description: string; intentData: Record<string, any> }>();
  /** The card numbers behind payment methods (Stripe keeps them; the API never shows them). */
  const cardNumbers = new Map<string, string>();
  const idempotent = new Map<string, { fingerprint: string; status: number; body: string }>();
  const failures: { status: number; path?: string | RegExp; method?: string; times: number }[] = [];
  const requests: FakeRequestLog[] = [];
  const events: StripeEvent[] = [];
  const deliveries: FakeDeliveryLog[] = [];
  let holding = false;
  const held: StripeEvent[] = [];
  let script: DeliveryScript | null = null;
  const inFlight = new Set<Promise<unknown>>();
  const timers = new Map<NodeJS.Timeout, () => void>();
  let closed = false;
  let baseUrl = '';

  const put = <T extends Record<string, any>>(o: T): T => {
    objects.set(o.id, o);
    return o;
  };
  const get = (id: string, kind: string): Record<string, any> | undefined => {
    const o = objects.get(id);
    return o && o.object === kind ? o : undefined;
  };

  // ---- events and webhooks ----

  function signatureHeader(payload: string, o: { timestamp?: number; secret?: string } = {}): string {
    const t = o.timestamp ?? unix();
    const v1 = crypto.createHmac('sha256', o.secret ?? webhookSecret).update(`${t}.${payload}`, 'utf8').digest('hex');
    return `t=${t},v1=${v1}`;
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.set(t, resolve);
    });

  async function attempt(event: StripeEvent, n: number, s: DeliveryScript | null): Promise<number> {
    const payload = JSON.stringify(event, null, 2);
    const signature =
      s?.signature === 'wrong'
        ? signatureHeader(payload, { secret: `whsec_${randomId('', 32)}` })
        : s?.signature === 'stale'
          ? signatureHeader(payload, { timestamp: unix() - 600 })
          : signatureHeader(payload);
    let status = 0;
    try {
      const res = await fetch(webhookUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
        body: payload,
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    deliveries.push({ eventId: event.id, type: event.type, attempt: n, status, signature, at: new Date() });
    return status;
  }

  async function deliver(event: StripeEvent, s: DeliveryScript | null): Promise<number> {
    if (s?.delayMs) await sleep(s.delayMs);
    let status = 0;
    for (let n = 1; n <= attempts && !closed && webhookUrl; n++) {
      status = await attempt(event, n, s);
      if (status >= 200 && status < 300) break;
      if (n < attempts) await sleep(retryMs);
    }
    return status;
  }

  function dispatch(event: StripeEvent): void {
    if (!webhookUrl || closed) return;
    const s = script;
    const send = async () => {
      await deliver(event, s);
      if (s?.twice) await deliver(event, s);
    };
    track(send());
  }

  function emit(type: string, object: Record<string, any>, request: { idempotencyKey: string | null } = { idempotencyKey: null }): void {
    const event: StripeEvent = {
      id: randomId('evt_'),
      object: 'event',
      api_version: FAKE_STRIPE_API_VERSION,
      created: unix(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: webhookUrl ? 1 : 0,
      request: { id: randomId('req_', 14), idempotency_key: request.idempotencyKey },
      type,
    };
    events.push(event);
    if (holding) held.push(event);
    else dispatch(event);
  }

  async function settled(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  // ---- expansion ----

  function expand(o: Record<string, any>, paths: string[]): Record<string, any> {
    const out = structuredClone(o);
    for (const path of paths) {
      let nodes: any[] = [out];
      const segs = path.split('.');
      segs.forEach((seg, i) => {
        const next: any[] = [];
        for (const node of nodes) {
          if (!node || typeof node !== 'object' || !(seg in node)) throw invalid(`This property cannot be expanded (${segs.slice(0, i + 1).join('.')}).`, { param: 'expand' });
          let v = node[seg];
          if (typeof v === 'string') {
            const found = objects.get(v);
            if (!found) throw invalid(`This property cannot be expanded (${segs.slice(0, i + 1).join('.')}).`, { param: 'expand' });
            v = node[seg] = structuredClone(found);
          }
          if (v !== null) next.push(v);
        }
        nodes = next;
      });
    }
    return out;
  }

  // ---- resources ----

  function createCustomer(p: Record<string, any>): Record<string, any> {
    return put({
      id: randomId('cus_', 14),
      object: 'customer',
      address: null,
      balance: 0,
      created: unix(),
      currency: null,
      default_source: null,
      delinquent: false,
      description: p.description ?? null,
      email: p.email || null,
      invoice_prefix: randomId('', 8).toUpperCase(),
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
      metadata: metadataParam(p),
      name: p.name || null,
      phone: p.phone || null,
      preferred_locales: [],
      shipping: null,
      tax_exempt: 'none',
      test_clock: null,
    });
  }

  function customerParam(p: Record<string, any>, required: boolean): string | null {
    const id = p.customer;
    if (id === undefined || id === '') {
      if (required) throw missingParam('customer');
      return null;
    }
    if (!get(String(id), 'customer')) throw noSuch('customer', String(id), 'customer');
    return String(id);
  }

  function createSession(p: Record<string, any>): Record<string, any> {
    if (!p.mode) throw missingParam('mode');
    if (p.mode !== 'payment') throw invalid(`Invalid mode: this fake knows mode=payment only, got ${p.mode}`, { param: 'mode' });
    const customer = customerParam(p, false);
    const items = p.line_items;
    if (!Array.isArray(items) || items.length === 0) throw missingParam('line_items');
    let total = 0;
    let currency: string | null = null;
    const names: string[] = [];
    items.forEach((item: any, i: number) => {
      const pd = item?.price_data;
      if (!pd) throw missingParam(`line_items[${i}][price_data]`);
      if (!pd.currency) throw missingParam(`line_items[${i}][price_data][currency]`);
      const unit = intParam(pd, 'unit_amount', { required: true })!;
      const quantity = intParam(item, 'quantity', { required: true })!;
      if (!pd.product_data?.name) throw missingParam(`line_items[${i}][price_data][product_data][name]`);
      if (currency && currency !== pd.currency) throw invalid('All line items must use the same currency.', { param: 'line_items' });
      currency = String(pd.currency).toLowerCase();
      total += unit * quantity;
      names.push(String(pd.product_data.name));
    });
    if (total < 50) throw invalid('The Checkout Session\'s total amount due must add up to at least $0.50 usd', { code: 'amount_too_small', param: 'line_items' });
    const intentData = (p.payment_intent_data ?? {}) as Record<string, any>;
    const sfu = intentData.setup_future_usage;
    if (sfu !== undefined && sfu !== 'off_session' && sfu !== 'on_session')
      throw invalid(`Invalid payment_intent_data[setup_future_usage]: must be one of on_session or off_session`, { param: 'payment_intent_data[setup_future_usage]' });
    metadataParam(intentData);
    const id = randomId('cs_test_', 58);
    const created = unix();
    sessionExtras.set(id, { description: names.join(', '), intentData });
    return put({
      id,
      object: 'checkout.session',
      amount_subtotal: total,
      amount_total: total,
      cancel_url: p.cancel_url ?? null,
      client_reference_id: p.client_reference_id ?? null,
      created,
      currency,
      customer,
      customer_creation: null,
      customer_details: null,
      customer_email: p.customer_email ?? null,
      expires_at: created + 24 * 3600,
      livemode: false,
      locale: p.locale ?? null,
      metadata: metadataParam(p),
      mode: 'payment',
      payment_intent: null,
      payment_method_types: ['card'],
      payment_status: 'unpaid',
      status: 'open',
      success_url: p.success_url ?? null,
      ui_mode: 'hosted',
      url: `${baseUrl}/pay/${id}`,
    });
  }

  function newIntent(p: { amount: number; currency: string; customer: string | null; description: string | null; metadata: Record<string, string>; setupFutureUsage: string | null }): Record<string, any> {
    const id = randomId('pi_');
    return put({
      id,
      object: 'payment_intent',
      amount: p.amount,
      amount_capturable: 0,
      amount_received: 0,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: 'automatic',
      client_secret: `${id}_secret_${randomId('', 25)}`,
      confirmation_method: 'automatic',
      created: unix(),
      currency: p.currency,
      customer: p.customer,
      description: p.description,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: p.metadata,
      next_action: null,
      payment_method: null,
      payment_method_types: ['card'],
      setup_future_usage: p.setupFutureUsage,
      status: 'requires_payment_method',
    });
  }

  function newPaymentMethod(card: CheckedCard, customer: string | null): Record<string, any> {
    const pm = put({
      id: randomId('pm_'),
      object: 'payment_method',
      billing_details: { address: null, email: null, name: null, phone: null },
      card: {
        brand: card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: 'US',
        exp_month: card.expMonth,
        exp_year: card.expYear,
        fingerprint: crypto.createHash('sha256').update(card.digits).digest('base64url').slice(0, 16),
        funding: 'credit',
        last4: card.last4,
        networks: { available: [card.brand], preferred: null },
      },
      created: unix(),
      customer,
      livemode: false,
      metadata: {},
      type: 'card',
    });
    cardNumbers.set(pm.id, card.digits);
    return pm;
  }

  function newCharge(pi: Record<string, any>, pm: Record<string, any>, failure: CardError | null): Record<string, any> {
    const id = randomId('ch_');
    return put({
      id,
      object: 'charge',
      amount: pi.amount,
      amount_captured: failure ? 0 : pi.amount,
      amount_refunded: 0,
      balance_transaction: failure ? null : randomId('txn_'),
      captured: !failure,
      created: unix(),
      currency: pi.currency,
      customer: pi.customer,
      description: pi.description,
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
      livemode: false,
      metadata: structuredClone(pi.metadata),
      outcome: failure
        ? { network_status: 'declined_by_network', reason: failure.declineCode, risk_level: 'normal', seller_message: 'The bank did not return any further details with this decline.', type: 'issuer_declined' }
        : { network_status: 'approved_by_network', reason: null, risk_level: 'normal', seller_message: 'Payment complete.', type: 'authorized' },
      paid: !failure,
      payment_intent: pi.id,
      payment_method: pm.id,
      payment_method_details: { type: 'card', card: { ...structuredClone(pm.card), network: pm.card.brand } },
      receipt_url: failure ? null : `${baseUrl}/receipts/${id}`,
      refunded: false,
      status: failure ? 'failed' : 'succeeded',
    });
  }

  /** One attempt of a payment intent with a card: succeeded, or the card error (PI back to requires_payment_method). */
  function attemptPayment(pi: Record<string, any>, pm: Record<string, any>, offSession: boolean, idempotencyKey: string | null): CardError | null {
    const failure = chargeOutcome(cardNumbers.get(pm.id)!, { offSession });
    pi.payment_method = pm.id;
    if (failure) {
      // Stripe makes no charge when the issuer asks for authentication off-session.
      if (failure.code !== 'authentication_required') pi.latest_charge = newCharge(pi, pm, failure).id;
      pi.status = 'requires_payment_method';
      pi.last_payment_error = {
        type: 'card_error',
        code: failure.code,
        decline_code: failure.declineCode,
        doc_url: `https://stripe.com/docs/error-codes/${failure.code.replace(/_/g, '-')}`,
        message: failure.message,
        payment_method: structuredClone(pm),
        ...(pi.latest_charge ? { charge: pi.latest_charge } : {}),
      };
      emit('payment_intent.payment_failed', pi, { idempotencyKey });
      return failure;
    }
    const charge = newCharge(pi, pm, null);
    pi.latest_charge = charge.id;
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.last_payment_error = null;
    if (pi.setup_future_usage && pi.customer) pm.customer = pi.customer;
    emit('payment_intent.succeeded', pi, { idempotencyKey });
    return null;
  }

  function cardErrorBody(failure: CardError, pi: Record<string, any>): Record<string, any> {
    return {
      type: 'card_error',
      code: failure.code,
      ...(failure.declineCode ? { decline_code: failure.declineCode } : {}),
      doc_url: `https://stripe.com/docs/error-codes/${failure.code.replace(/_/g, '-')}`,
      message: failure.message,
      ...(failure.param ? { param: failure.param } : {}),
      ...(pi.latest_charge ? { charge: pi.latest_charge } : {}),
      payment_intent: structuredClone(pi),
      payment_method: structuredClone(objects.get(pi.payment_method)),
      request_log_url: `${baseUrl}/logs/${randomId('req_', 14)}`,
    };
  }

  function createPaymentIntent(p: Record<string, any>, idempotencyKey: string | null): { status: number; body: Record<string, any> } {
    const amount = intParam(p, 'amount', { required: true })!;
    if (!p.currency) throw missingParam('currency');
    if (amount < 50) throw invalid('Amount must be at least $0.50 usd', { code: 'amount_too_small', param: 'amount' });
    const customer = customerParam(p, false);
    const offSession = boolParam(p, 'off_session');
    const confirm = boolParam(p, 'confirm');
    if (offSession && !confirm) throw invalid('You may only specify `off_session` when confirming this PaymentIntent.', { param: 'off_session' });
    let pm: Record<string, any> | undefined;
    if (p.payment_method) {
      pm = get(String(p.payment_method), 'payment_method');
      if (!pm) throw noSuch('PaymentMethod', String(p.payment_method), 'payment_method');
      if (pm.customer && pm.customer !== customer)
        throw invalid(`The provided PaymentMethod belongs to a different Customer than the one on this PaymentIntent.`, { param: 'payment_method' });
      if (!pm.customer && customer)
        throw invalid(`The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again.`, { param: 'payment_method' });
    }
    const sfu = p.setup_future_usage ?? null;
    const pi = newIntent({ amount, currency: String(p.currency).toLowerCase(), customer, description: p.description || null, metadata: metadataParam(p), setupFutureUsage: sfu });
    if (pm) {
      pi.payment_method = pm.id;
      pi.status = 'requires_confirmation';
    }
    if (confirm) {
      if (!pm) throw invalid('You cannot confirm this PaymentIntent because it\'s missing a payment method.', { code: 'payment_intent_unexpected_state', param: 'payment_method' });
      const failure = attemptPayment(pi, pm, offSession, idempotencyKey);
      if (failure) return { status: 402, body: { error: cardErrorBody(failure, pi) } };
    }
    return { status: 200, body: pi };
  }

  function createRefund(p: Record<string, any>, idempotencyKey: string | null): Record<string, any> {
    let charge: Record<string, any> | undefined;
    let pi: Record<string, any> | undefined;
    if (p.payment_intent) {
      pi = get(String(p.payment_intent), 'payment_intent');
      if (!pi) throw noSuch('payment_intent', String(p.payment_intent), 'payment_intent');
      if (pi.status !== 'succeeded' || !pi.latest_charge)
        throw invalid(`This PaymentIntent (${pi.id}) does not have a successful charge to refund.`, { code: 'charge_not_refundable', param: 'payment_intent' });
      charge = objects.get(pi.latest_charge);
    } else if (p.charge) {
      charge = get(String(p.charge), 'charge');
      if (!charge) throw noSuch('charge', String(p.charge), 'charge');
      pi = charge.payment_intent ? objects.get(charge.payment_intent) : undefined;
    } else {
      throw missingParam('payment_intent');
    }
    const c = charge!;
    const left = c.amount - c.amount_refunded;
    if (left <= 0) throw invalid(`Charge ${c.id} has already been refunded.`, { code: 'charge_already_refunded', param: 'charge' });
    const amount = intParam(p, 'amount') ?? left;
    if (amount <= 0) throw invalid('Invalid positive integer', { param: 'amount' });
    if (amount > left) throw invalid(`Refund amount (${dollars(amount)}) is greater than unrefunded amount on charge (${dollars(left)})`, { param: 'amount' });
    const refund = put({
      id: randomId('re_'),
      object: 'refund',
      amount,
      balance_transaction: randomId('txn_'),
      charge: c.id,
      created: unix(),
      currency: c.currency,
      metadata: metadataParam(p),
      payment_intent: pi?.id ?? null,
      reason: p.reason ?? null,
      status: 'succeeded',
    });
    c.amount_refunded += amount;
    c.refunded = c.amount_refunded === c.amount;
    emit('charge.refunded', c, { idempotencyKey });
    return refund;
  }

  // ---- API routing ----

  type Handler = (m: RegExpExecArray, params: Record<string, any>, idempotencyKey: string | null) => { status: number; body: Record<string, any> } | Record<string, any>;
  const routes: { method: string; pattern: RegExp; handler: Handler; shape: Shape }[] = [];
  const route = (method: string, pattern: RegExp, handler: Handler, shape: Shape = READ_PARAMS) => routes.push({ method, pattern, handler, shape });
  const retrieve = (kind: string, what: string) => (m: RegExpExecArray, p: Record<string, any>) => {
    const o = get(m[1]!, kind);
    if (!o) throw noSuch(what, m[1]!, 'id', 404);
    return expand(o, expandList(p));
  };

  route('POST', /^\/v1\/customers$/, (_m, p) => expand(createCustomer(p), expandList(p)), CUSTOMER_PARAMS);
  route('GET', /^\/v1\/customers$/, (_m, p) => {
    const data = [...objects.values()].filter((o) => o.object === 'customer' && (!p.email || o.email === p.email)).reverse();
    const limit = intParam(p, 'limit') ?? 10;
    return { object: 'list', data: data.slice(0, limit), has_more: data.length > limit, url: '/v1/customers' };
  }, { email: true, limit: true, expand: true });
  route('GET', /^\/v1\/customers\/([^/]+)$/, retrieve('customer', 'customer'));
  route('POST', /^\/v1\/customers\/([^/]+)$/, (m, p) => {
    const c = get(m[1]!, 'customer');
    if (!c) throw noSuch('customer', m[1]!, 'id', 404);
    if (p.name !== undefined) c.name = p.name || null;
    if (p.email !== undefined) c.email = p.email || null;
    if (p.metadata !== undefined) Object.assign(c.metadata, metadataParam(p));
    if (p.invoice_settings?.default_payment_method !== undefined) c.invoice_settings.default_payment_method = p.invoice_settings.default_payment_method || null;
    return expand(c, expandList(p));
  }, CUSTOMER_PARAMS);
  route('POST', /^\/v1\/checkout\/sessions$/, (_m, p) => expand(createSession(p), expandList(p)), SESSION_PARAMS);
  route('GET', /^\/v1\/checkout\/sessions\/([^/]+)$/, retrieve('checkout.session', 'checkout.session'));
  route('POST', /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/, (m, _p, key) => {
    const s = get(m[1]!, 'checkout.session');
    if (!s) throw noSuch('checkout.session', m[1]!, 'id', 404);
    if (s.status !== 'open') throw invalid(`Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${s.status}".`, { code: 'checkout_session_not_open' });
    s.status = 'expired';
    s.url = null;
    emit('checkout.session.expired', s, { idempotencyKey: key });
    return s;
  });
  route('POST', /^\/v1\/payment_intents$/, (_m, p, key) => {
    const r = createPaymentIntent(p, key);
    return r.status === 200 ? { status: 200, body: expand(r.body, expandList(p)) } : r;
  }, INTENT_PARAMS);
  route('GET', /^\/v1\/payment_intents\/([^/]+)$/, retrieve('payment_intent', 'payment_intent'));
  route('GET', /^\/v1\/charges\/([^/]+)$/, retrieve('charge', 'charge'));
  route('POST', /^\/v1\/refunds$/, (_m, p, key) => expand(createRefund(p, key), expandList(p)), REFUND_PARAMS);
  route('GET', /^\/v1\/refunds\/([^/]+)$/, retrieve('refund', 'refund'));
  route('GET', /^\/v1\/payment_methods\/([^/]+)$/, retrieve('payment_method', 'PaymentMethod'));
  route('POST', /^\/v1\/payment_methods\/([^/]+)\/detach$/, (m) => {
    const pm = get(m[1]!, 'payment_method');
    if (!pm) throw noSuch('PaymentMethod', m[1]!, 'payment_method', 404);
    if (!pm.customer) throw invalid('The payment method you provided is not attached to a customer so detachment is impossible.', { code: 'payment_method_unexpected_state' });
    pm.customer = null;
    return pm;
  });
  route('GET', /^\/v1\/events\/([^/]+)$/, (m) => {
    const e = events.find((x) => x.id === m[1]);
    if (!e) throw noSuch('event', m[1]!, 'id', 404);
    return e;
  });

  function authorised(req: http.IncomingMessage): StripeHttpError | null {
    const h = req.headers.authorization ?? '';
    let key: string | null = null;
    if (/^Bearer /i.test(h)) key = h.slice(7).trim();
    else if (/^Basic /i.test(h)) key = Buffer.from(h.slice(6), 'base64').toString('utf8').split(':')[0]!;
    if (!key)
      return new StripeHttpError(401, {
        type: 'invalid_request_error',
        message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
      });
    const a = Buffer.from(key);
    const b = Buffer.from(secretKey);
    if (a.length !== b.length || !crypto.timingSafeEqual(a, b))
      return new StripeHttpError(401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` });
    return null;
  }

  function send(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': randomId('req_', 14), 'stripe-version': FAKE_STRIPE_API_VERSION, ...headers });
    res.end(body);
  }

  function api(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: string, raw: string): void {
    const method = req.method ?? 'GET';
    const idempotencyKey = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    let params: Record<string, any> = {};
    const log = (status: number) => requests.push({ method, path, params, idempotencyKey, status, at: new Date() });
    const answer = (status: number, body: Record<string, any>, headers?: Record<string, string>) => {
      log(status);
      send(res, status, JSON.stringify(body, null, 2), headers);
    };
    const denied = authorised(req);
    if (denied) return answer(denied.status, { error: denied.body });
    try {
      params = parseStripeForm(method === 'GET' || method === 'DELETE' ? query : raw);
    } catch {
      return answer(400, { error: { type: 'invalid_request_error', message: 'Invalid request body.' } });
    }
    const failure = failures.find((f) => f.times > 0 && (!f.method || f.method === method) && (!f.path || (typeof f.path === 'string' ? path.includes(f.path) : f.path.test(path))));
    if (failure) {
      failure.times--;
      if (failure.status === 429)
        return answer(429, { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly. We recommend an exponential backoff of your requests.' } });
      return answer(failure.status, { error: { type: 'api_error', message: 'An unknown error occurred' } });
    }
    const r = routes.find((x) => x.method === method && x.pattern.test(path));
    if (!r) return answer(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.` } });
    const fingerprint = `${method} ${path} ${stable(params)}`;
    const idemKey = idempotencyKey && method === 'POST' ? `${secretKey}\u0000${idempotencyKey}` : null;
    if (idemKey) {
      const prior = idempotent.get(idemKey);
      if (prior) {
        if (prior.fingerprint !== fingerprint)
          return answer(400, {
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            },
          });
        log(prior.status);
        return send(res, prior.status, prior.body, { 'idempotent-replayed': 'true', 'original-request': 'req_replayed' });
      }
    }
    let status: number;
    let body: Record<string, any>;
    try {
      knownParams(params, r.shape);
      const out = r.handler(r.pattern.exec(path)!, params, idempotencyKey);
      if ('status' in out && 'body' in out && typeof out.status === 'number') ({ status, body } = out as { status: number; body: Record<string, any> });
      else [status, body] = [200, out];
    } catch (e) {
      if (!(e instanceof StripeHttpError)) throw e;
      return answer(e.status, { error: e.body });
    }
    const text = JSON.stringify(body, null, 2);
    // Stripe saves the result of a request that ran (success, or a card error), not one refused by validation.
    if (idemKey && (status === 200 || status === 402)) idempotent.set(idemKey, { fingerprint, status, body: text });
    log(status);
    send(res, status, text);
  }

  // ---- the hosted checkout page ----

  function page(res: http.ServerResponse, status: number, title: string, inner: string): void {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}label{display:block;margin-top:.75rem}input{display:block;width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}button{margin-top:1rem;padding:.6rem 1rem;font-size:1rem;background:#1a56db;color:#fff;border:0;border-radius:4px}[role=alert]{color:#9b1c1c;border:1px solid #9b1c1c;padding:.5rem;margin-top:1rem}.row{display:flex;gap:.5rem}.row label{flex:1}</style>
</head><body><main>${inner}</main></body></html>`);
  }

  function checkoutForm(res: http.ServerResponse, s: Record<string, any>, status: number, error: string | null): void {
    const extras = sessionExtras.get(s.id)!;
    const saves = extras.intentData.setup_future_usage === 'off_session';
    page(
      res,
      status,
      `Pay ${dollars(s.amount_total)}`,
      `<h1>${esc(extras.description)}</h1>
<p>${esc(dollars(s.amount_total))} <strong>(test mode)</strong></p>
${saves ? '<p>Your card will be saved for future payments.</p>' : ''}
${error ? `<p role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/pay/${esc(s.id)}">
<label for="number">Card number</label><input id="number" name="number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><label>Expiry month<input name="exp_month" inputmode="numeric" autocomplete="cc-exp-month" required></label>
<label>Expiry year<input name="exp_year" inputmode="numeric" autocomplete="cc-exp-year" required></label>
<label>CVC<input name="cvc" inputmode="numeric" autocomplete="cc-csc" required></label></div>
<button type="submit">Pay ${esc(dollars(s.amount_total))}</button>
</form>
${s.cancel_url ? `<p><a href="${esc(s.cancel_url)}">Cancel and go back</a></p>` : ''}`,
    );
  }

  function hosted(req: http.IncomingMessage, res: http.ServerResponse, id: string, raw: string): void {
    const s = get(id, 'checkout.session');
    if (!s) return page(res, 404, 'Not found', '<h1>Something went wrong</h1><p>This page could not be found.</p>');
    const successUrl = () => String(s.success_url ?? '').replaceAll('{CHECKOUT_SESSION_ID}', s.id);
    if (s.status === 'complete') {
      if (s.success_url) {
        res.writeHead(303, { location: successUrl() });
        return void res.end();
      }
      return page(res, 200, 'Paid', '<h1>Thanks for your payment</h1>');
    }
    if (s.status === 'expired') return page(res, 410, 'Expired', '<h1>This checkout session has expired</h1>');
    if (req.method !== 'POST') return checkoutForm(res, s, 200, null);
    const f = new URLSearchParams(raw);
    const checked = checkCardFields(
      { number: f.get('number') ?? '', expMonth: Number(f.get('exp_month') ?? ''), expYear: Number(f.get('exp_year') ?? ''), cvc: f.get('cvc') ?? '' },
      new Date(),
    );
    if (!checked.ok) return checkoutForm(res, s, 402, checked.error.message);
    const extras = sessionExtras.get(s.id)!;
    let pi = s.payment_intent ? objects.get(s.payment_intent)! : undefined;
    if (!pi) {
      pi = newIntent({
        amount: s.amount_total,
        currency: s.currency,
        customer: s.customer,
        description: extras.intentData.description || null,
        metadata: metadataParam(extras.intentData),
        setupFutureUsage: extras.intentData.setup_future_usage ?? null,
      });
      s.payment_intent = pi.id;
    }
    const pm = newPaymentMethod(checked.card, null);
    const failure = attemptPayment(pi, pm, false, null);
    if (failure) return checkoutForm(res, s, 402, failure.message);
    s.status = 'complete';
    s.payment_status = 'paid';
    s.customer_details = { address: null, email: s.customer ? (objects.get(s.customer)?.email ?? null) : null, name: null, phone: null, tax_exempt: 'none', tax_ids: [] };
    s.url = null;
    emit('checkout.session.completed', s);
    if (!s.success_url) return page(res, 200, 'Paid', '<h1>Thanks for your payment</h1>');
    res.writeHead(303, { location: successUrl() });
    res.end();
  }

  function receipt(res: http.ServerResponse, id: string): void {
    const c = get(id, 'charge');
    if (!c || c.status !== 'succeeded') return page(res, 404, 'Not found', '<h1>Receipt not found</h1>');
    const card = c.payment_method_details.card;
    page(
      res,
      200,
      'Receipt',
      `<h1>Receipt</h1><dl><dt>Amount paid</dt><dd>${esc(dollars(c.amount))}</dd><dt>Date paid</dt><dd>${esc(new Date(c.created * 1000).toISOString())}</dd><dt>Payment method</dt><dd>${esc(card.brand)} – ${esc(card.last4)}</dd>${c.amount_refunded ? `<dt>Refunded</dt><dd>${esc(dollars(c.amount_refunded))}</dd>` : ''}</dl>`,
    );
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake');
      try {
        if (url.pathname.startsWith('/v1/')) return api(req, res, url.pathname, url.search.slice(1), raw);
        const pay = /^\/pay\/([^/]+)$/.exec(url.pathname);
        if (pay) return hosted(req, res, decodeURIComponent(pay[1]!), raw);
        const rec = /^\/receipts\/([^/]+)$/.exec(url.pathname);
        if (rec && req.method === 'GET') return receipt(res, decodeURIComponent(rec[1]!));
        page(res, 404, 'Not found', '<h1>Not found</h1>');
      } catch (e) {
        send(res, 500, JSON.stringify({ error: { type: 'api_error', message: `fake Stripe: ${(e as Error).message}` } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    secretKey,
    publishableKey,
    webhookSecret,
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    requests,
    events,
    deliveries,
    object: (id) => objects.get(id),
    objectsOf: (kind) => [...objects.values()].filter((o) => o.object === kind),
    failNext(f) {
      failures.push({ status: f.status, path: f.path, method: f.method, times: f.times ?? 1 });
    },
    holdEvents() {
      holding = true;
    },
    async releaseEvents(o = {}) {
      holding = false;
      const out = held.splice(0);
      if (o.reverse) out.reverse();
      for (const e of out) dispatch(e);
      await settled();
    },
    scriptDeliveries(s) {
      script = s;
    },
    redeliver(eventId, s) {
      const e = events.find((x) => x.id === eventId);
      if (!e) throw new Error(`fake Stripe: no event ${eventId}`);
      if (!webhookUrl) throw new Error('fake Stripe: no webhook URL');
      return track(deliver(e, s ?? null));
    },
    settled,
    async pay(sessionId, card) {
      const res = await fetch(`${baseUrl}/pay/${encodeURIComponent(sessionId)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ number: card.number, exp_month: String(card.exp_month), exp_year: String(card.exp_year), cvc: card.cvc }).toString(),
        redirect: 'manual',
      });
      return { status: res.status, location: res.headers.get('location'), body: await res.text() };
    },
    cardBehavesAs(paymentMethodId, number) {
      if (!cardNumbers.has(paymentMethodId)) throw new Error(`fake Stripe: no payment method ${paymentMethodId}`);
      cardNumbers.set(paymentMethodId, number);
    },
    signatureHeader,
    async close() {
      closed = true;
      for (const [t, wake] of timers) {
        clearTimeout(t);
        wake();
      }
      timers.clear();
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
