import test from 'ava';
import { contrastRatio, relativeLuminance, textColourOn } from '../../actors/shared/contrast.ts';
import { composePage } from '../../actors/websites/composer.ts';
import { deterministicCopy } from '../../actors/websites/copy.ts';
import { richFacts } from '../helpers/site-facts.ts';

/**
 * Text on a brand colour (issue 20 §4): black or white by WCAG 2.x contrast, AA being 4.5:1 for
 * normal text (WCAG 2.1 SC 1.4.3). Expected values are WCAG's own: relative luminance of white 1
 * and black 0, their ratio 21:1.
 */

test('relative luminance and contrast ratio follow WCAG 2.x', (t) => {
  t.is(relativeLuminance('#ffffff'), 1);
  t.is(relativeLuminance('#000000'), 0);
  t.is(relativeLuminance('#fff'), 1);
  t.is(contrastRatio('#000000', '#ffffff'), 21);
  t.is(contrastRatio('#ffffff', '#000000'), 21, 'the order of the two colours does not matter');
  // #767676 is the lightest grey that still gives 4.5:1 with white; #777777 just misses it.
  t.true(contrastRatio('#767676', '#ffffff') >= 4.5);
  t.true(contrastRatio('#777777', '#ffffff') < 4.5);
  t.is(Math.round(contrastRatio('#f59e0b', '#ffffff') * 100) / 100, 2.15);
  t.throws(() => relativeLuminance('orange'));
});

test('amber #f59e0b takes black text; navy #1e3a8a takes white', (t) => {
  t.is(textColourOn('#f59e0b'), '#000000');
  t.is(textColourOn('#1e3a8a'), '#ffffff');
});

test('the text chosen reaches 4.5:1 on every grey and on light and dark brand colours', (t) => {
  const colours = ['#fde047', '#a3e635', '#22d3ee', '#f472b6', '#ffffff', '#2563eb', '#1f2937', '#b91c1c', '#000000'];
  for (let v = 0; v <= 255; v += 5) colours.push(`#${v.toString(16).padStart(2, '0').repeat(3)}`);
  for (const c of colours) t.true(contrastRatio(c, textColourOn(c)) >= 4.5, `${c} with ${textColourOn(c)}`);
});

test('white is kept where it reaches 4.5:1 (a brand colour that already works is not changed)', (t) => {
  t.is(textColourOn('#2563eb'), '#ffffff');
  t.is(textColourOn('#767676'), '#ffffff');
  t.is(textColourOn('#777777'), '#000000');
});

test("customers' sites: the button text on the accent is the contrast rule's colour, 4.5:1 or more, for every accent", (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const name = `Business ${i}`;
    const facts = richFacts({ brandName: name });
    const copy = deterministicCopy(facts);
    if (!copy.ok) throw new Error(copy.reason);
    const html = composePage(facts, copy.copy, { year: 2025 }).html;
    const root = /:root\{--accent:(#[0-9a-f]{6});--on-accent:(#[0-9a-f]{6});/.exec(html);
    t.truthy(root, 'the page names the text colour on its accent');
    const [, accent, onAccent] = root!;
    seen.add(accent);
    t.is(onAccent, textColourOn(accent));
    t.true(contrastRatio(accent, onAccent) >= 4.5, `${onAccent} on ${accent}`);
    t.regex(html, /\.btn\{[^}]*background:var\(--accent\);color:var\(--on-accent\)/);
  }
  t.true(seen.size >= 5, 'many accents were tried');
});
