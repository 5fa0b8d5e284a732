import type { Client } from './http.ts';

/**
 * One number per country for a registry file that lists nothing any test dials: loading it makes
 * the registry current (issue 20 §1) without blocking a test's own numbers.
 */
export const PLACEHOLDER_REGISTRY_NUMBER: Record<string, string> = {
  US: '+12125550198',
  CA: '+14165550198',
  GB: '+442079460998',
  AU: '+61290009998',
};

/**
 * Loads every national do-not-call registry of `country` that is not current on the service's
 * clock (never loaded, or older than its law allows), as an operator would: calls to the country
 * wait until then. Returns the ids it loaded.
 */
export async function loadDncRegistries(con: Client, country: string, numbers: string[] = [PLACEHOLDER_REGISTRY_NUMBER[country]]): Promise<string[]> {
  const list = await con.get('/admin/v1/dnc/registries');
  if (list.status !== 200) throw new Error(`listing registries failed: ${list.status} ${list.text}`);
  const due = (list.body.data as { id: string; country: string; current: boolean }[]).filter((r) => r.country === country && !r.current);
  for (const r of due) {
    const res = await con.post('/admin/v1/dnc/registry', { country, registry: r.id, source: `test load of ${r.id}`, text: numbers.join('\n') });
    if (res.status !== 200) throw new Error(`loading ${r.id} failed: ${res.status} ${res.text}`);
  }
  return due.map((r) => r.id);
}
