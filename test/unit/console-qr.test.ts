/**
 * The console's QR codes (console/src/ui/qr.ts over qrcode-generator), which draw the two-factor
 * setup address. The codes of these texts were read back by a real decoder once (zbarimg 0.23:
 * versions 1 to 15, byte mode, UTF-8, all decoded to the exact text); the fingerprints below hold
 * the output to those codes, and the structure checks say what a reader needs whatever the text.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { qrModules, qrPath } from '../../console/src/ui/qr.ts';

const OTPAUTH = 'otpauth://totp/Northwind%20Agency:olivia%40northwind-agency.example?secret=D3CCFANRWKQ5POS7S4EJIYSLJNSWKWHK&issuer=Northwind%20Agency';
const fingerprint = (m: boolean[][]) => crypto.createHash('sha256').update(m.map((r) => r.map((d) => (d ? '1' : '0')).join('')).join('\n')).digest('hex');

test('the modules of two decoded texts are unchanged', (t) => {
  t.is(fingerprint(qrModules(OTPAUTH)), '0b019dbe2014bff97abaf15ef339ad08c41e88312c55c9a401858704394f65cf');
  t.is(fingerprint(qrModules('hi')), '81240590f3a630b03aa70a8aaf521ec30c4911af3307da27eeb2126afcb5b39a');
});

test('the smallest version that holds the text: 21 modules for 2 bytes, 49 (version 8) for the setup address', (t) => {
  t.is(qrModules('hi').length, 21);
  t.is(qrModules(OTPAUTH).length, 49);
  for (const m of [qrModules('hi'), qrModules(OTPAUTH)]) t.true(m.every((row) => row.length === m.length), 'square');
});

test('finder patterns in three corners, timing patterns between them', (t) => {
  for (const m of [qrModules('hi'), qrModules(OTPAUTH), qrModules('x'.repeat(300))]) {
    const size = m.length;
    for (const [cx, cy] of [
      [3, 3],
      [size - 4, 3],
      [3, size - 4],
    ]) {
      for (let d = -3; d <= 3; d++) {
        t.true(m[cy - 3][cx + d] && m[cy + 3][cx + d] && m[cy + d][cx - 3] && m[cy + d][cx + 3], 'dark ring');
        if (Math.abs(d) <= 1) t.true(m[cy + d][cx - 1] && m[cy + d][cx + 1], 'dark centre');
      }
      t.false(m[cy - 2][cx], 'light ring');
    }
    for (let i = 8; i < size - 8; i++) t.is(m[6][i], i % 2 === 0, 'timing');
  }
});

test('the format information says level M and passes its BCH check', (t) => {
  const m = qrModules(OTPAUTH);
  // The first copy, bits 0..14 as drawn around the top-left finder.
  const cells: [number, number][] = [];
  for (let i = 0; i <= 5; i++) cells.push([8, i]);
  cells.push([8, 7], [8, 8], [7, 8]);
  for (let i = 9; i < 15; i++) cells.push([14 - i, 8]);
  const bits = cells.reduce((n, [x, y], i) => n | ((m[y][x] ? 1 : 0) << i), 0) ^ 0x5412;
  t.is(bits >>> 13, 0b00, 'level M');
  let rem = bits >>> 10;
  for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
  t.is(((bits >>> 10) << 10) | rem, bits, 'a valid BCH code word');
});

test('a text too long for version 15 is refused; the SVG path has one square per dark module', (t) => {
  t.throws(() => qrModules('x'.repeat(500)), { instanceOf: RangeError });
  const m = qrModules('hi');
  t.is((qrPath(m).match(/M/g) ?? []).length, m.flat().filter(Boolean).length);
});
