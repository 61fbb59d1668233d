import { createServer } from 'node:http';
import type { LookupAddress } from 'node:dns';
import { addressProblem, checkEndpoint, checkEndpointUrl, guardedLookup, type Lookup } from '../../src/domain/webhooks/url-guard';
import { nextDelayMs, RETRY_DELAYS_MS } from '../../src/domain/webhooks/delivery';
import { retryAfter, WebhookSender } from '../../src/domain/webhooks/sender';

const fakeDns =
  (table: Record<string, string[]>): Lookup =>
  (hostname, _options, callback) => {
    const list = table[hostname];
    if (!list) return callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      list.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };

describe('webhook endpoint SSRF guard', () => {
  const refusedAlways = [
    'https://169.254.169.254/latest/meta-data',
    'https://[fd00:ec2::254]/',
    'https://[fe80::1]/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://[::ffff:169.254.169.254]/',
    'https://[::169.254.169.254]/', // IPv4-compatible
    'https://[64:ff9b::169.254.169.254]/', // NAT64
    'https://[2002:a9fe:a9fe::1]/', // 6to4 of 169.254.169.254
    'https://[::0.0.0.0]/',
  ];
  const privateOnes = [
    'https://127.0.0.1/',
    'https://2130706433/', // decimal
    'https://0177.0.0.1/', // octal
    'https://0x7f.0x0.0x0.0x1/', // hex
    'https://0x7f000001/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/', // IPv4-mapped
    'https://[::ffff:7f00:1]/',
    'https://[::127.0.0.1]/', // IPv4-compatible, which the URL parser writes [::7f00:1]
    'https://[::7f00:1]/',
    'https://[::10.0.0.1]/',
    'https://[::ffff:0:127.0.0.1]/', // IPv4-translated (RFC 6145)
    'https://[64:ff9b::127.0.0.1]/', // NAT64 well-known prefix
    'https://[64:ff9b::a00:1]/',
    'https://[64:ff9b:1:7f00:0:100::]/', // NAT64 local-use prefix: 127.0.0.1 in bits 48-63 and 72-87
    'https://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
    'https://[2002:c0a8:101::1]/', // 6to4 of 192.168.1.1
    'https://10.0.0.8/',
    'https://172.16.3.4/',
    'https://192.168.1.1/',
    'https://[fd12:3456::1]/',
    'https://100.64.0.1/',
  ];

  test.each(privateOnes)('when private URLs are not allowed, then %s is refused', (url) => {
    expect(() => checkEndpointUrl(url, false)).toThrow(/may not reach/);
  });
  test.each(privateOnes)('when private URLs are allowed, then %s is taken', (url) => {
    expect(() => checkEndpointUrl(url, true)).not.toThrow();
  });
  test.each(refusedAlways)('when private URLs are allowed, then %s stays refused', (url) => {
    expect(() => checkEndpointUrl(url, true)).toThrow(/may not reach/);
  });

  test('when the URL is plain http, then it is refused unless private URLs are allowed', () => {
    expect(() => checkEndpointUrl('http://example.com/', false)).toThrow(/https/);
    expect(() => checkEndpointUrl('http://example.com/', true)).not.toThrow();
    expect(() => checkEndpointUrl('ftp://example.com/', true)).toThrow(/https/);
    expect(() => checkEndpointUrl('https://user:pw@example.com/', false)).toThrow(/user name/);
    expect(() => checkEndpointUrl('not a url', false)).toThrow(/valid URL/);
  });

  test('when a name resolves to a forbidden address (any of several), then it is refused', async () => {
    const dns = fakeDns({
      'public.test': ['93.184.216.34'],
      'loopy.test': ['93.184.216.34', '127.0.0.1'],
      'meta.test': ['169.254.169.254'],
      'mapped.test': ['::ffff:10.0.0.1'],
    });
    await expect(checkEndpoint('https://public.test/hook', false, dns)).resolves.toBeInstanceOf(URL);
    await expect(checkEndpoint('https://loopy.test/hook', false, dns)).rejects.toThrow(/resolves to a loopback/);
    await expect(checkEndpoint('https://mapped.test/hook', false, dns)).rejects.toThrow(/private network/);
    await expect(checkEndpoint('https://meta.test/hook', true, dns)).rejects.toThrow(/link-local/);
    await expect(checkEndpoint('https://nowhere.test/hook', false, dns)).rejects.toThrow(/does not resolve/);
  });

  test('when a socket resolves a name that now points at loopback (rebinding), then the connection is refused', async () => {
    const lookup = guardedLookup(false, fakeDns({ 'rebind.test': ['127.0.0.1'], 'public.test': ['93.184.216.34'] }));
    const run = (host: string) =>
      new Promise<{ err: Error | null; address: unknown }>((resolve) =>
        lookup(host, { all: true }, (err, address) => resolve({ err, address })),
      );
    expect((await run('rebind.test')).err?.message).toMatch(/refused: rebind.test resolves to a loopback/);
    expect((await run('public.test')).address).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  test.each([
    ['::127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:0:7f00:1', '127.0.0.1'],
    ['64:ff9b::7f00:1', '127.0.0.1'],
    ['64:ff9b:1:7f00:0:100::', '127.0.0.1'],
    ['2002:7f00:1::', '127.0.0.1'],
    ['::a9fe:a9fe', '169.254.169.254'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['2002:a9fe:a9fe:1234::1', '169.254.169.254'],
  ])('when an IPv6 address %s embeds %s, then it is judged as that IPv4 address', (v6, v4) => {
    expect(addressProblem(v6, false)).toBe(addressProblem(v4, false));
    expect(addressProblem(v6, true)).toBe(addressProblem(v4, true));
  });

  test('when an IPv6 address embeds a public IPv4 address, then it passes as that address does', () => {
    for (const a of ['64:ff9b::808:808', '64:ff9b::8.8.8.8', '2002:5db8:d822::1', '::ffff:93.184.216.34', '::8.8.8.8'])
      expect(addressProblem(a, false)).toBeUndefined();
    // IPv6's own loopback and unspecified addresses stay what they are, not 0.0.0.1 and 0.0.0.0.
    expect(addressProblem('::1', false)).toMatch(/loopback/);
    expect(addressProblem('::1', true)).toBeUndefined();
    expect(addressProblem('::', true)).toMatch(/unspecified/);
  });

  test('when a name resolves to an IPv6 form of a forbidden IPv4 address, then creation and the delivery socket refuse it', async () => {
    const forms = ['::7f00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '64:ff9b:1:7f00:0:100::', '2002:7f00:1::'];
    const table = Object.fromEntries(forms.map((a, i) => [`v6-${i}.test`, ['2606:2800:220:1:248:1893:25c8:1946', a]]));
    const dns = fakeDns(table);
    const lookup = guardedLookup(false, dns);
    for (const host of Object.keys(table)) {
      await expect(checkEndpoint(`https://${host}/hook`, false, dns)).rejects.toThrow(/resolves to a loopback/);
      const err = await new Promise<Error | null>((resolve) => lookup(host, { all: true }, (e) => resolve(e)));
      expect(err?.message).toMatch(new RegExp(`refused: ${host} resolves to a loopback`));
    }
  });

  test('addresses: public unicast passes, metadata never does', () => {
    expect(addressProblem('8.8.8.8', false)).toBeUndefined();
    expect(addressProblem('2001:4860:4860::8888', false)).toBeUndefined();
    expect(addressProblem('fd00:ec2::254', true)).toMatch(/metadata/);
    expect(addressProblem('169.254.169.254', true)).toMatch(/link-local/);
  });
});

describe('webhook retry schedule', () => {
  test('when attempts fail, then the delays follow the schedule within ±10 % jitter', () => {
    expect(RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    for (let n = 1; n <= 7; n++) {
      const base = RETRY_DELAYS_MS[n - 1]!;
      expect(nextDelayMs(n, undefined, () => 0)).toBe(Math.round(base * 0.9));
      expect(nextDelayMs(n, undefined, () => 1)).toBe(Math.round(base * 1.1));
    }
  });

  test('when the endpoint sends Retry-After, then it is honoured between 1 s and 10 h', () => {
    expect(nextDelayMs(1, 120_000)).toBe(120_000);
    expect(nextDelayMs(1, 0)).toBe(1000);
    expect(nextDelayMs(1, 90 * 3600_000)).toBe(36_000_000);
    expect(retryAfter('30')).toBe(30_000);
    expect(retryAfter(new Date(Date.now() + 60_000).toUTCString(), Date.now())).toBeGreaterThan(58_000);
    expect(retryAfter('soon')).toBeUndefined();
  });
});

describe('webhook sender: the address actually connected to', () => {
  test('when a name resolves to loopback at send time (rebinding), then undici never connects and the attempt says why', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const dns = fakeDns({ 'rebind.test': ['127.0.0.1'], 'meta.test': ['169.254.169.254'], 'nat64.test': ['64:ff9b::7f00:1'] });
    const strict = new WebhookSender({ timeoutMs: 1000, allowPrivate: false, lookup: dns });
    const lenient = new WebhookSender({ timeoutMs: 1000, allowPrivate: true, lookup: dns });
    try {
      const refused = await strict.send(`https://rebind.test:${port}/hook`, {}, '{}');
      expect(refused).toMatchObject({ ok: false, statusCode: null });
      expect(refused.error).toMatch(/refused: rebind.test resolves to a loopback/);
      // The same loopback behind a NAT64 prefix: a gateway would connect to 127.0.0.1.
      expect((await strict.send(`https://nat64.test:${port}/hook`, {}, '{}')).error).toMatch(
        /refused: nat64.test resolves to a loopback/,
      );
      const metadata = await lenient.send(`http://meta.test:${port}/hook`, {}, '{}');
      expect(metadata.error).toMatch(/link-local/);
      // The same name allowed (private URLs on) connects for real.
      expect(await lenient.send(`http://rebind.test:${port}/hook`, {}, '{}')).toMatchObject({ ok: true, statusCode: 204 });
      expect(hits).toBe(1);
    } finally {
      await strict.close();
      await lenient.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
