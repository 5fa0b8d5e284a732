import test from 'ava';
import fs from 'node:fs';
import { WINDOW_RULES, type WindowRule } from '../../actors/scheduler/window-rules.ts';

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
