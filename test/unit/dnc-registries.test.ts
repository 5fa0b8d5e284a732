import { readFileSync } from 'node:fs';
import test from 'ava';
import { DNC_REGISTRIES, registriesOf, registryFor, staleRegistries } from '../../actors/shared/dnc-registries.ts';

/** National do-not-call registries (issue 20 §1): 16 CFR 310.4(b)(3)(iv), 47 CFR 64.1200(c)(2): a list no older than 31 days. */
const DAY = 86_400_000;
const LOADED = new Date('2026-11-01T12:00:00Z');
const after = (days: number, ms = 0) => new Date(LOADED.getTime() + days * DAY + ms);

test('the US registry: never loaded stops calls; loaded 31 days ago still counts; a millisecond later it stops them, since then', (t) => {
  t.deepEqual(staleRegistries('US', [], LOADED).map((s) => [s.id, s.importedAt, s.staleSince]), [['US-NDNC', null, null]]);
  const imports = [{ registry: 'US-NDNC', importedAt: LOADED }];
  t.deepEqual(staleRegistries('US', imports, after(0)), []);
  t.deepEqual(staleRegistries('US', imports, after(31)), [], 'exactly 31 days old: "no more than 31 days prior"');
  const stale = staleRegistries('US', imports, after(31, 1));
  t.is(stale.length, 1);
  t.deepEqual(stale[0].importedAt, LOADED);
  t.deepEqual(stale[0].staleSince, new Date('2026-12-02T12:00:00Z'));
});

test('each registry applies to its own country only; a country with none (DE, FR, NL) is never held', (t) => {
  t.deepEqual(registriesOf('GB').map((r) => r.id), ['GB-TPS', 'GB-CTPS']);
  t.deepEqual(staleRegistries('GB', [{ registry: 'GB-TPS', importedAt: LOADED }], after(1)).map((s) => s.id), ['GB-CTPS']);
  t.deepEqual(staleRegistries('CA', [{ registry: 'US-NDNC', importedAt: LOADED }], after(1)).map((s) => s.id), ['CA-DNCL'], "another country's load does not count");
  for (const country of ['DE', 'FR', 'NL']) t.deepEqual(staleRegistries(country, [], LOADED), []);
  // GB's TPS: a number listed less than 28 days is not yet protected (PECR reg. 21(4)), so a list may be 28 days old.
  t.deepEqual(staleRegistries('GB', [{ registry: 'GB-TPS', importedAt: LOADED }, { registry: 'GB-CTPS', importedAt: LOADED }], after(28, 1)).map((s) => s.id), ['GB-TPS', 'GB-CTPS']);
});

test('an import names its registry where the country has several; the only one otherwise', (t) => {
  t.is(registryFor('us', undefined)?.id, 'US-NDNC');
  t.is(registryFor('GB', undefined), null);
  t.is(registryFor('GB', 'gb-ctps')?.id, 'GB-CTPS');
  t.is(registryFor('US', 'GB-TPS'), null);
  t.is(registryFor('DE', undefined), null);
});

test('every registry carries its citation, source and check date, and none is older than 31 days allowed', (t) => {
  for (const r of DNC_REGISTRIES) {
    t.truthy(r.citation && r.url.startsWith('https://'), r.id);
    t.is(r.checked, '2026-11-27', r.id);
    t.true(r.maxAgeDays > 0 && r.maxAgeDays <= 31, r.id);
  }
});

test('docs/compliance.md lists every registry with its citation and the 2026-11-27 check', (t) => {
  const doc = readFileSync(new URL('../../docs/compliance.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## National do-not-call registries'), doc.indexOf('## Records of consent'));
  t.true(section.length > 0);
  for (const r of DNC_REGISTRIES) {
    const row = section.split('\n').find((line) => line.startsWith(`| \`${r.id}\``));
    t.truthy(row, r.id);
    t.true(row!.includes(r.citation) && row!.includes(`${r.maxAgeDays} days`) && row!.includes(r.checked), r.id);
  }
});
