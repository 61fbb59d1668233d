import type { AddressInfo } from 'node:net';
import { request, type Server } from 'node:http';
import express, { type Express } from 'express';
import { jsonSender } from '../../src/api/http/send-json';

/**
 * jsonSender must put on the wire what express's `res.status(s).json(body)` puts there, for
 * every reply the route table makes and the uncommon ones it hands back to express. Each case
 * is answered by one app both ways and the raw answers compared (bar Date).
 */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const BODIES: unknown[] = [
  { status: 'ok' },
  [1, 'two', { three: null }],
  'a string',
  42,
  null,
  { text: 'café € 💶 \u2028' },
  { big: 'x'.repeat(5000) },
];

function appWith(options: (app: Express) => void): Express {
  const app = express();
  options(app);
  const send = jsonSender(app);
  app.all('/reply', (req, res) => {
    const status = Number(req.query.status);
    const body = BODIES[Number(req.query.body)];
    if (req.query.type) res.type(String(req.query.type));
    if (req.query.etag) res.setHeader('ETag', String(req.query.etag));
    if (req.query.how === 'express') res.status(status).json(body);
    else send(req, res, status, body);
  });
  return app;
}

async function listen(app: Express): Promise<{ server: Server; port: number }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function ask(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function compare(app: Express, cases: Array<{ method: string; query: string; headers?: Record<string, string> }>) {
  const { server, port } = await listen(app);
  try {
    const differences: string[] = [];
    for (const c of cases) {
      const expected = await ask(port, c.method, `/reply?how=express&${c.query}`, c.headers);
      const actual = await ask(port, c.method, `/reply?how=ours&${c.query}`, c.headers);
      if (JSON.stringify(actual) !== JSON.stringify(expected))
        differences.push(`${c.method} ${c.query}: express ${JSON.stringify(expected)}\n ours ${JSON.stringify(actual)}`);
    }
    return differences;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

function cases(): Array<{ method: string; query: string; headers?: Record<string, string> }> {
  const all = [];
  for (const method of ['GET', 'HEAD', 'POST', 'DELETE'])
    for (const status of [200, 201, 202, 204, 205, 304, 404, 409])
      for (let body = 0; body < BODIES.length; body++) all.push({ method, query: `status=${status}&body=${body}` });
  // A handler's own content type, its own ETag, and conditional requests that may answer 304.
  all.push({ method: 'GET', query: 'status=200&body=0&type=application/problem%2Bjson' });
  all.push({ method: 'GET', query: 'status=200&body=0&etag=%22v1%22' });
  all.push({ method: 'GET', query: 'status=200&body=0&etag=%22v1%22', headers: { 'if-none-match': '"v1"' } });
  all.push({ method: 'GET', query: 'status=200&body=0', headers: { 'if-none-match': 'W/"f-VaSQ4oDUiZblZNAEkkN+sX+q3Sg"' } });
  all.push({ method: 'GET', query: 'status=200&body=0', headers: { 'if-none-match': '"other"' } });
  all.push({ method: 'HEAD', query: 'status=200&body=0', headers: { 'if-modified-since': new Date().toUTCString() } });
  return all;
}

test('with express defaults, every status, body and method is answered with the bytes of res.json', async () => {
  expect(
    await compare(
      appWith(() => undefined),
      cases(),
    ),
  ).toEqual([]);
});

test('with ETags turned off, or strong, or JSON settings changed, the answers still match res.json', async () => {
  for (const configure of [
    (app: Express) => app.set('etag', false),
    (app: Express) => app.set('etag', 'strong'),
    (app: Express) => app.set('json spaces', 2),
    (app: Express) => app.set('json escape', true),
  ]) {
    expect(await compare(appWith(configure), cases().slice(0, 60))).toEqual([]);
  }
});
