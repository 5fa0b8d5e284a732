import test from 'ava';
import { localTime, localTimeFormats } from '../../actors/call/local-time.ts';
import { offsetFormats, zoneOffsetMs } from '../../actors/shared/zone-time.ts';
import { ZONE_FORMATS_KEPT } from '../../actors/shared/zone-formats.ts';

/** The `n`th spelling of `zone`'s case (the runtime accepts every one of them). */
function spelling(zone: string, n: number): string {
  let bit = 0;
  return [...zone].map((c) => (/[a-z]/i.test(c) ? ((n >> bit++) & 1 ? c.toUpperCase() : c.toLowerCase()) : c)).join('');
}

test('a zone spelt in ever more cases (a customer timezone a reseller chooses) keeps at most ZONE_FORMATS_KEPT formatters, each answer still right', (t) => {
  const at = new Date('2026-07-01T12:00:00Z');
  const spellings = Array.from({ length: ZONE_FORMATS_KEPT + 500 }, (_, n) => spelling('America/New_York', n));
  t.is(new Set(spellings).size, spellings.length);
  for (const zone of spellings) {
    t.is(localTime(at, zone), '2026-07-01 08:00');
    t.is(zoneOffsetMs(zone, at.getTime()), -4 * 3600_000);
  }
  t.true(localTimeFormats.size <= ZONE_FORMATS_KEPT, `local times keep ${localTimeFormats.size} formatters`);
  t.true(offsetFormats.size <= ZONE_FORMATS_KEPT, `offsets keep ${offsetFormats.size} formatters`);
  // The one most recently used is still kept (and still right).
  t.is(localTime(at, spellings.at(-1)!), '2026-07-01 08:00');
});

test("a kept formatter reads each instant's own offset across a daylight-saving change (it keeps no offset of its own)", (t) => {
  // Europe/London: BST ends 2026-10-25 01:00 UTC; America/New_York: EDT begins 2026-03-08 07:00 UTC.
  t.is(localTime(new Date('2026-10-25T00:30:00Z'), 'Europe/London'), '2026-10-25 01:30');
  t.is(localTime(new Date('2026-10-25T01:30:00Z'), 'Europe/London'), '2026-10-25 01:30');
  t.is(localTime(new Date('2026-10-25T02:30:00Z'), 'Europe/London'), '2026-10-25 02:30');
  t.is(localTime(new Date('2026-03-08T06:59:00Z'), 'America/New_York'), '2026-03-08 01:59');
  t.is(localTime(new Date('2026-03-08T07:00:00Z'), 'America/New_York'), '2026-03-08 03:00');
  t.is(zoneOffsetMs('Europe/London', Date.parse('2026-10-25T00:30:00Z')), 3600_000);
  t.is(zoneOffsetMs('Europe/London', Date.parse('2026-10-25T01:30:00Z')), 0);
});

test('a zone the runtime does not know throws and is not kept', (t) => {
  const before = localTimeFormats.size;
  t.throws(() => localTime(new Date(), 'Mars/Olympus_Mons'), { instanceOf: RangeError });
  t.is(localTimeFormats.size, before);
});
