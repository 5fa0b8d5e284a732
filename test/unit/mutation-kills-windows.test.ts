/**
 * Calling-window behaviour that the mutation run (docs/decisions.md, "Mutation testing") found no
 * test for. Each test names the rule it holds (ITU-T E.164, the statutes' hours) literally.
 */
import test from 'ava';
import { callingZones, isOpen } from '../../actors/scheduler/calling-windows.ts';

const at = (iso: string): Date => new Date(iso);

test('an E.164 number has at most 15 digits after the plus and nothing else (ITU-T E.164 §6.1): anything longer or trailing is refused', (t) => {
  const noon = at('2027-06-16T16:00:00Z'); // 12:00 in New York, inside 8:00–21:00
  t.true(isOpen('+12125550123', 'US', noon), 'the 11-digit New York number itself is open');
  t.true(isOpen('+121255501234567', 'US', noon), '15 digits is still E.164');
  for (const bad of ['+1212555012345678', '+12125550123x', '+12125550123 ', '+1+12125550123']) {
    t.throws(() => isOpen(bad, 'US', noon), { instanceOf: RangeError }, bad);
    t.throws(() => callingZones(bad, 'US'), { instanceOf: RangeError }, bad);
  }
});
