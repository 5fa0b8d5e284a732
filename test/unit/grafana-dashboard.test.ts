import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { collectProcessMetrics, metricsRegistry } from '../../runtime/metrics.ts';

/**
 * docs/grafana-dashboard.json reads the metrics the service exports (runtime/metrics.ts): every
 * metric name and label in its queries exists, so a renamed metric breaks this test, not the
 * operator's dashboard.
 */
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'grafana-dashboard.json'), 'utf8'));
const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));

test('every metric and label the dashboard queries is one the service exports', async (t) => {
  collectProcessMetrics();
  const exported = new Map((await metricsRegistry.getMetricsAsJSON()).map((m) => [m.name, m]));
  const labelsOf = (name: string) => new Set([...(((metricsRegistry.getSingleMetric(name) as unknown as { labelNames?: string[] }) ?? {}).labelNames ?? []), 'le', 'instance', 'job']);
  t.true(exprs.length > 20);
  const used = new Set<string>();
  for (const expr of exprs) {
    for (const [, full, selector] of expr.matchAll(/(switchboard_[a-z0-9_]+)(\{[^}]*\})?/g)) {
      const base = full!.replace(/_(bucket|count|sum)$/, '');
      const name = exported.has(full!) ? full! : base;
      t.true(exported.has(name), `${full} in "${expr}"`);
      used.add(name);
      for (const [, label] of (selector ?? '').matchAll(/([a-z_]+)\s*(=~|!=|=)/g)) t.true(labelsOf(name).has(label!), `label ${label} of ${name}`);
    }
    for (const [, labels] of expr.matchAll(/by \(([^)]*)\)/g)) {
      for (const label of labels!.split(',').map((l) => l.trim())) {
        t.true([...used].some((name) => labelsOf(name).has(label)), `grouping label ${label} in "${expr}"`);
      }
    }
  }
  // Every metric of the service's own (not the process metrics) is on the dashboard.
  const own = [...exported.keys()].filter((n) => !/^switchboard_(process|nodejs)_/.test(n));
  t.deepEqual(own.filter((n) => !used.has(n)), [], 'metrics missing from the dashboard');
});
