import crypto from 'node:crypto';
import { client, type Client } from './http.ts';
import { ADMIN_TOKEN } from './service.ts';

/** The operator console of a running service. */
export function adminClient(baseUrl: string): Client {
  return client(baseUrl, ADMIN_TOKEN);
}

function must<T>(reply: { status: number; body: T; text: string }, what: string): T {
  if (reply.status >= 300) throw new Error(`${what} failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

export interface TestAccount {
  id: string;
  /** Test key secret with every scope. */
  testKey: string;
  testKeyId: string;
  api: Client;
  admin: Client;
}

/**
 * A reseller account with a test key. `live: true` also verifies it, signs the agreement, goes
 * live and adds a live key (`liveKey`, `liveApi`).
 */
export async function makeAccount(
  baseUrl: string,
  opts: { name?: string; country?: string; live?: boolean; scopes?: string[] } = {},
): Promise<TestAccount & { liveKey?: string; liveApi?: Client }> {
  const con = adminClient(baseUrl);
  const account = must(await con.post('/admin/v1/accounts', { name: opts.name ?? `Agency ${crypto.randomBytes(3).toString('hex')}`, country: opts.country ?? 'US' }), 'create account');
  // Tests poll; the request limits have tests of their own that set them back down.
  must(await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 1_000_000, burst: 1_000_000 }), 'limits');
  const key = must(await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'tests', ...(opts.scopes ? { scopes: opts.scopes } : {}) }), 'create key');
  const result: TestAccount & { liveKey?: string; liveApi?: Client } = {
    id: account.id,
    testKey: key.secret,
    testKeyId: key.id,
    api: client(baseUrl, key.secret),
    admin: con,
  };
  if (opts.live) {
    must(await con.post(`/admin/v1/accounts/${account.id}/kyb`, { status: 'verified' }), 'kyb');
    must(await con.post(`/admin/v1/accounts/${account.id}/agreement`, { version: '2026-08' }), 'agreement');
    must(await con.post(`/admin/v1/accounts/${account.id}/go_live`), 'go live');
    const live = must(await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'live', label: 'live tests' }), 'live key');
    result.liveKey = live.secret;
    result.liveApi = client(baseUrl, live.secret);
  }
  return result;
}

/** A customer of `api`'s account and mode, with defaults. */
export async function makeCustomer(api: Client, fields: Record<string, unknown> = {}) {
  return must(await api.post('/v1/customers', { name: 'Bright Dental', country: 'US', ...fields }), 'create customer');
}
