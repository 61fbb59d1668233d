import type { TestApp } from '../../helpers/test-app';

/** A counter or gauge of /metrics with these labels (0 when the series is absent). */
export async function metric(app: TestApp, name: string, labels = ''): Promise<number> {
  const res = await app.request('GET', '/metrics');
  const line = res.text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The reads sent back to the primary, every reason together. */
export async function fallbacks(app: TestApp): Promise<number> {
  const res = await app.request('GET', '/metrics');
  return res.text
    .split('\n')
    .filter((l) => l.startsWith('db_replica_fallbacks_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}
