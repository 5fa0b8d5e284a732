import { readFileSync } from 'node:fs';
/**
 * `switchboard admin <action> [--flag value]`: the console's HTTP API from a terminal. Each
 * action is one request to a running service (SWITCHBOARD_URL, default http://localhost:$PORT)
 * with the operator token (SWITCHBOARD_ADMIN_TOKEN); the response is printed as JSON.
 */

type Flags = Record<string, string | undefined>;
interface Action {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: (f: Flags) => string;
  body?: (f: Flags) => Record<string, unknown>;
  help: string;
}

const need = (f: Flags, name: string): string => {
  const v = f[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
};
const list = (v: string | undefined) => (v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean));
/** A number flag; "null" clears. */
const num = (v: string | undefined) => (v === undefined ? undefined : v === 'null' ? null : Number(v));
const compact = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const account = (f: Flags) => `/admin/v1/accounts/${encodeURIComponent(need(f, 'account'))}`;
const customer = (f: Flags) => `/admin/v1/customers/${encodeURIComponent(need(f, 'customer'))}`;

export const ACTIONS: Record<string, Action> = {
  'create-account': {
    method: 'POST',
    path: () => '/admin/v1/accounts',
    body: (f) => compact({ name: need(f, 'name'), country: need(f, 'country'), owner_email: f['owner-email'] }),
    help: "--name NAME --country CC [--owner-email EMAIL] (prints the owner's invitation link once)",
  },
  'list-accounts': { method: 'GET', path: () => '/admin/v1/accounts', help: '' },
  'get-account': { method: 'GET', path: account, help: '--account ID' },
  'create-key': {
    method: 'POST',
    path: (f) => `${account(f)}/keys`,
    body: (f) =>
      compact({
        mode: f.mode ?? 'test',
        label: f.label ?? 'default',
        scopes: list(f.scopes),
        ip_allowlist: list(f['ip-allowlist']),
        expires_at: f['expires-at'],
      }),
    help: '--account ID [--mode test|live] [--label L] [--scopes a,b] [--ip-allowlist 10.0.0.0/8,::1] [--expires-at ISO]',
  },
  'list-keys': { method: 'GET', path: (f) => `${account(f)}/keys`, help: '--account ID' },
  'rotate-key': { method: 'POST', path: (f) => `${account(f)}/keys/${need(f, 'key')}/rotate`, help: '--account ID --key KEY_ID' },
  'revoke-key': { method: 'DELETE', path: (f) => `${account(f)}/keys/${need(f, 'key')}`, help: '--account ID --key KEY_ID' },
  'set-kyb': {
    method: 'POST',
    path: (f) => `${account(f)}/kyb`,
    body: (f) => compact({ status: need(f, 'status'), note: f.note }),
    help: '--account ID --status verified|rejected|pending [--note "shown to the reseller"]',
  },
  'business-details': { method: 'GET', path: (f) => `${account(f)}/business_details`, help: '--account ID' },
  'sign-agreement': {
    method: 'POST',
    path: (f) => `${account(f)}/agreement`,
    body: (f) => ({ version: need(f, 'version') }),
    help: '--account ID --version V',
  },
  'go-live': { method: 'POST', path: (f) => `${account(f)}/go_live`, help: '--account ID' },
  suspend: { method: 'POST', path: (f) => `${account(f)}/suspend`, help: '--account ID' },
  reinstate: { method: 'POST', path: (f) => `${account(f)}/reinstate`, help: '--account ID' },
  'set-limits': {
    method: 'PATCH',
    path: (f) => `${account(f)}/limits`,
    body: (f) =>
      compact({
        requests_per_minute: num(f['requests-per-minute']),
        burst: num(f.burst),
        concurrent_calls: num(f['concurrent-calls']),
        max_customers: num(f['max-customers']),
        daily_spend_cap_cents: num(f['daily-spend-cap-cents']),
        monthly_spend_cap_cents: num(f['monthly-spend-cap-cents']),
      }),
    help: '--account ID [--requests-per-minute N] [--burst N] [--concurrent-calls N] [--max-customers N|null] [--daily-spend-cap-cents N|null] [--monthly-spend-cap-cents N|null]',
  },
  'certify-language': { method: 'POST', path: (f) => `/admin/v1/languages/${encodeURIComponent(need(f, 'locale'))}/certify`, help: '--locale en-US' },
  'certify-script': {
    method: 'POST',
    path: (f) => `${customer(f)}/script/certify`,
    body: (f) => compact({ script: f['script-file'] ? readFileSync(f['script-file'], 'utf8') : undefined }),
    help: '--customer ID [--script-file script.txt]',
  },
  research: {
    method: 'POST',
    path: (f) => `${customer(f)}/research`,
    body: (f) => ({ notes: f['notes-file'] ? readFileSync(f['notes-file'], 'utf8') : need(f, 'notes') }),
    help: '--customer ID (--notes TEXT | --notes-file FILE)',
  },
  'assign-number': {
    method: 'POST',
    path: (f) => `${customer(f)}/numbers`,
    body: (f) => compact({ phone_number: need(f, 'phone-number'), kind: f.kind }),
    help: '--customer ID --phone-number +15551234567 [--kind rented|caller_id]',
  },
  'import-dnc': {
    method: 'POST',
    path: () => '/admin/v1/dnc/registry',
    body: (f) => compact({ country: need(f, 'country'), registry: f.registry, source: f.source ?? need(f, 'file'), text: readFileSync(need(f, 'file'), 'utf8') }),
    help: '--country US --file registry.csv [--registry GB-TPS] [--source "FTC DNC 2026-11"] (replaces the registry\'s list)',
  },
  'dnc-registries': { method: 'GET', path: () => '/admin/v1/dnc/registries', help: '(each registry, when it was last loaded, whether it stops calls)' },
  'compliance-record': {
    method: 'GET',
    path: (f) => `/admin/v1/calls/${encodeURIComponent(need(f, 'call'))}/compliance_record`,
    help: '--call CALL_ID',
  },
  'top-up': {
    method: 'POST',
    path: (f) => `${account(f)}/top_ups`,
    body: (f) => compact({ amount_cents: num(need(f, 'amount-cents')), payment_reference: f['payment-reference'] }),
    help: '--account ID --amount-cents 50000 [--payment-reference REF]',
  },
  'auto-top-up': {
    method: 'PUT',
    path: (f) => `${account(f)}/auto_top_up`,
    body: (f) => ({ threshold_cents: num(need(f, 'threshold-cents')), amount_cents: num(need(f, 'amount-cents')) }),
    help: '--account ID --threshold-cents 5000 --amount-cents 25000',
  },
  refund: {
    method: 'POST',
    path: (f) => `${account(f)}/refunds`,
    body: (f) => compact({ amount_cents: num(need(f, 'amount-cents')), customer_id: f.customer, reference: f.reference, description: f.description }),
    help: '--account ID --amount-cents N [--customer ID] [--reference REF] [--description TEXT]',
  },
  'card-payments': { method: 'GET', path: (f) => `${account(f)}/card_payments`, help: '--account ID (card top-ups of both modes, newest first)' },
  'refund-top-up': {
    method: 'POST',
    path: (f) => `${account(f)}/card_payments/${encodeURIComponent(need(f, 'payment'))}/refunds`,
    body: (f) => compact({ amount_cents: num(f.amount) ?? undefined }),
    help: '--account ID --payment CARD_PAYMENT_ID [--amount CENTS] (to the card; default: what is left; bonus forfeited)',
  },
  balance: { method: 'GET', path: (f) => `${account(f)}/balance${f.mode ? `?mode=${f.mode}` : ''}`, help: '--account ID [--mode live|test]' },
  activity: { method: 'GET', path: (f) => `${account(f)}/activity`, help: '--account ID' },
  'run-job': {
    method: 'POST',
    path: (f) => `/admin/v1/jobs/${encodeURIComponent(need(f, 'name'))}/run`,
    help: '--name release_holds|expire_bonuses|close_month|expire_requests|finish_stale_calls',
  },
  'create-webhook': {
    method: 'POST',
    path: (f) => `${account(f)}/webhook_endpoints`,
    body: (f) => compact({ url: need(f, 'url'), mode: f.mode ?? 'test', event_types: list(f['event-types']), description: f.description }),
    help: '--account ID --url https://… [--mode test|live] [--event-types call.completed,balance.low]',
  },
  'list-webhooks': { method: 'GET', path: (f) => `${account(f)}/webhook_endpoints`, help: '--account ID' },
  'roll-webhook-secret': {
    method: 'POST',
    path: (f) => `${account(f)}/webhook_endpoints/${need(f, 'endpoint')}/roll_secret`,
    body: (f) => compact({ grace_seconds: num(f['grace-seconds']) }),
    help: '--account ID --endpoint EID [--grace-seconds 86400]',
  },
  deliveries: { method: 'GET', path: (f) => `${account(f)}/webhook_endpoints/${need(f, 'endpoint')}/deliveries`, help: '--account ID --endpoint EID' },
  'resend-delivery': {
    method: 'POST',
    path: (f) => `${account(f)}/webhook_endpoints/${need(f, 'endpoint')}/deliveries/${need(f, 'delivery')}/resend`,
    help: '--account ID --endpoint EID --delivery DID',
  },
  events: { method: 'GET', path: (f) => `${account(f)}/events${f.type ? `?type=${encodeURIComponent(f.type)}` : ''}`, help: '--account ID [--type key.rotated]' },
  'advance-clock': {
    method: 'POST',
    path: () => '/admin/v1/test_clock/advance',
    body: (f) => ({ seconds: num(need(f, 'seconds')) }),
    help: '--seconds N (only with SWITCHBOARD_TEST_CLOCK=1)',
  },
};

export class UsageError extends Error {}

function parseFlags(args: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    else flags[arg.slice(2)] = args[++i];
  }
  return flags;
}

export function adminUsage(): string {
  return ['Usage: switchboard admin <action> [flags]', '', ...Object.entries(ACTIONS).map(([name, a]) => `  ${name.padEnd(18)} ${a.help}`)].join('\n');
}

/** Runs one console action; returns the process exit code. */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env, out = process.stdout, err = process.stderr): Promise<number> {
  const [name, ...rest] = argv;
  const action = name ? ACTIONS[name] : undefined;
  if (!action) {
    err.write(`${name ? `unknown console action "${name}"\n\n` : ''}${adminUsage()}\n`);
    return 2;
  }
  let path: string;
  let body: Record<string, unknown> | undefined;
  try {
    const flags = parseFlags(rest);
    path = action.path(flags);
    body = action.body?.(flags);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err.write(`${e.message}\n  switchboard admin ${name} ${action.help}\n`);
    return 2;
  }
  const token = env.SWITCHBOARD_ADMIN_TOKEN;
  if (!token) {
    err.write('SWITCHBOARD_ADMIN_TOKEN is not set: use the token `switchboard start` printed at its first start.\n');
    return 2;
  }
  const base = (env.SWITCHBOARD_URL || `http://localhost:${env.PORT || 8080}`).replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(base + path, {
      method: action.method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    err.write(`cannot reach the service at ${base}: ${(e as Error).message}\n`);
    return 1;
  }
  const text = await response.text();
  let printed = text;
  try {
    printed = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    /* not JSON: print as is */
  }
  (response.ok ? out : err).write(`${printed}\n`);
  return response.ok ? 0 : 1;
}
