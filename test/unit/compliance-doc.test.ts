import test from 'ava';
import fs from 'node:fs';
import { WINDOW_RULES, type WindowRule } from '../../actors/scheduler/window-rules.ts';
import { CONSENT_RULES, NO_REDIAL_RULES } from '../../actors/scheduler/consent.ts';

// docs/compliance.md is the rules table for people: every rule, its citation and its check date.
const doc = fs.readFileSync(new URL('../../docs/compliance.md', import.meta.url), 'utf8');

test('docs/compliance.md lists every window rule with its citation and last-checked date', (t) => {
  for (const r of Object.values(WINDOW_RULES) as WindowRule[]) {
    const row = doc.split('\n').find((line) => line.startsWith(`| ${r.id} |`));
    t.truthy(row, `${r.id} has no row`);
    t.true(row!.includes(r.citation.replace(/\|/g, '\\|')), `${r.id}: citation differs from window-rules.ts`);
    t.true(row!.includes(r.checked), `${r.id}: check date differs`);
  }
});

test('docs/compliance.md says it is not legal advice, holds the consent rule and the caps', (t) => {
  t.regex(doc, /engineering, not legal advice/);
  t.regex(doc, /## Consent for AI-voice calls\n\nEnforced since issue 13 §1/);
  t.regex(doc, /## Call-frequency caps\n\nEnforced since issue 13 §2/);
});

test('docs/compliance.md has a row for every consent rule; the state auto-dialler rules say they were checked on 2026-11-27', (t) => {
  for (const r of CONSENT_RULES) {
    const row = doc.split('\n').find((line) => line.startsWith(`| ${r.id} |`) && !/\| (law|policy) \|/.test(line));
    t.truthy(row, `${r.id} has no row in the consent table`);
    if (r.checked === '2026-11-27') t.true(row!.includes('last checked 2026-11-27'), `${r.id}: no check date`);
  }
  for (const r of NO_REDIAL_RULES) t.true(doc.includes(r.citation.split(' (')[0]), r.id);
  t.regex(doc, /vacated\*\* it on\n  24 January 2025 \(\*Insurance Marketing Coalition Ltd\. v\. FCC\*/);
  t.notRegex(doc, /one-to-one consent rule, which\s+did not take effect/);
});
