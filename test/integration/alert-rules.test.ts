import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestApp, type TestApp } from '../helpers/test-app';

/**
 * The sample alert rules (ops/prometheus/alerts.yml) must name metrics the service really
 * exports: a renamed metric would otherwise leave an alert that can never fire.
 */
const RULES_FILE = join(__dirname, '../../ops/prometheus/alerts.yml');
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

function metricsNamedByRules(): Map<string, string> {
  const file = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: Array<{ rules: Array<{ expr: string }> }> };
  const found = new Map<string, string>();
  for (const { expr } of file.groups.flatMap((g) => g.rules)) {
    // Our metric families all start with one of these; label names (queue, le) do not.
    for (const [name] of expr.matchAll(/\b(?:http|queue|outbox|secrets|db_replica)_[a-z_]+\b/g))
      found.set(name.replace(HISTOGRAM_SERIES, ''), expr);
  }
  return found;
}

let app: TestApp;
beforeAll(async () => {
  // A replica configured (one nobody answers at): its series exist only then.
  app = await startTestApp({
    label: 'alert-rules',
    env: { ROLE: 'api', DATABASE_REPLICA_URL: 'postgres://postgres@127.0.0.1:1/trading' },
  });
});
afterAll(() => app?.stop());

test('when the sample alert rules are read, then every metric they name is on /metrics', async () => {
  const named = metricsNamedByRules();
  expect(named.size).toBeGreaterThanOrEqual(5);
  const exported = (await app.request('GET', '/metrics')).text;
  for (const [metric, expr] of named) {
    expect({ metric, expr, exported: exported.includes(`# TYPE ${metric} `) }).toEqual({ metric, expr, exported: true });
  }
});
