import test from 'ava';
import { centsToDecimal, csvCell, csvRow, fileSlug } from '../../actors/console/csv.ts';

test('RFC 4180: a cell with a comma, a quote, CR or LF is quoted with its quotes doubled; rows end with CRLF', (t) => {
  t.is(csvCell('plain text'), 'plain text');
  t.is(csvCell('a, b'), '"a, b"');
  t.is(csvCell('say "hi"'), '"say ""hi"""');
  t.is(csvCell('two\nlines'), '"two\nlines"');
  t.is(csvCell(null), '');
  t.is(csvRow(['a', 1, null, 'b,c']), 'a,1,,"b,c"\r\n');
});

test('OWASP CSV injection: text starting with = + - @ tab or CR is read as text, never a formula', (t) => {
  t.is(csvCell('=1+2'), "'=1+2");
  t.is(csvCell('+1 555'), "'+1 555");
  t.is(csvCell('-2+3+cmd|x'), "'-2+3+cmd|x");
  t.is(csvCell('@SUM(A1)'), "'@SUM(A1)");
  t.is(csvCell('\t=1'), "'\t=1");
  t.is(csvCell('\r=1'), `"'\r=1"`);
  t.is(csvCell('=HYPERLINK("x","y")'), `"'=HYPERLINK(""x"",""y"")"`);
  t.is(csvCell('a=1'), 'a=1', 'only the first character matters');
});

test('numbers the service formats stay numbers: integer cents and a decimal amount', (t) => {
  t.is(csvCell(-200), '-200');
  t.is(csvCell({ numeral: centsToDecimal(-200) }), '-2.00');
  t.throws(() => csvCell({ numeral: '=1' }));
  t.is(centsToDecimal(0), '0.00');
  t.is(centsToDecimal(5), '0.05');
  t.is(centsToDecimal(-55), '-0.55');
  t.is(centsToDecimal(123_456_789), '1234567.89');
});

test('file slugs: ASCII letters, digits and dashes, or the fallback', (t) => {
  t.is(fileSlug('@Bright Dental, "North"', 'x'), 'bright-dental-north');
  t.is(fileSlug('Café Zürich', 'x'), 'cafe-zurich');
  t.is(fileSlug('東京', 'customer-1234'), 'customer-1234');
});
