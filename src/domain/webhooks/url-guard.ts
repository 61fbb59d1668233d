import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * SSRF defence for webhook endpoints. An endpoint must be
 * https on a public address. WEBHOOKS_ALLOW_PRIVATE_URLS (development and tests only) also
 * admits plain http, loopback, private (RFC 1918, CGNAT) and unique-local addresses; never
 * link-local (169.254.0.0/16, fe80::/10, where cloud metadata lives), the AWS IPv6 metadata
 * address fd00:ec2::254, unspecified, multicast, broadcast or reserved ones.
 *
 * The URL is checked when it is stored and before every delivery; the address a delivery
 * connects to is checked again at connect time (`guardedLookup`), so a name that resolved to
 * a public address at creation and to 127.0.0.1 later (DNS rebinding) is refused then.
 * Alternative spellings of an address (decimal `2130706433`, octal `0177.0.0.1`, hex
 * `0x7f.1`) are normalised by the WHATWG URL parser before we look. An IPv6 address that
 * carries an IPv4 address is judged by that IPv4 address: a host
 * that translates or tunnels it (the kernel's IPv4-compatible handling, a NAT64 gateway, a
 * 6to4 relay) ends up connecting to it, so `[::127.0.0.1]` is loopback as much as 127.0.0.1.
 */

/** Ranges (ipaddr.js names) allowed only with WEBHOOKS_ALLOW_PRIVATE_URLS. */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);
/** Cloud metadata endpoints outside the link-local ranges, refused whatever the setting. */
const METADATA = new Set(['fd00:ec2::254']);

export class EndpointRefused extends Error {
  constructor(
    message: string,
    /** A 422 type for the API: the URL could not be read, or its value is refused. */
    readonly type: 'url_parsing' | 'value_error' = 'value_error',
  ) {
    super(message);
    this.name = 'EndpointRefused';
  }
}

/** Why an address may not be connected to, or undefined when it may. */
export function addressProblem(address: string, allowPrivate: boolean): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return `${address} is not an IP address`;
  }
  if (ip.kind() === 'ipv6') ip = embeddedIPv4(ip as ipaddr.IPv6) ?? ip;
  const normal = ip.toNormalizedString();
  if (ip.kind() === 'ipv6' && METADATA.has(ipaddr.IPv6.parse(normal).toString())) return 'a cloud metadata address';
  const range = ip.range();
  if (range === 'unicast') return undefined;
  if (PRIVATE_RANGES.has(range)) return allowPrivate ? undefined : `a ${describe(range)} address`;
  return `a ${describe(range)} address`;
}

/**
 * The IPv4 address an IPv6 address carries, where its form says it carries one:
 *   ::a.b.c.d        IPv4-compatible (::/96, deprecated but still routed by some stacks);
 *                    `::` and `::1` themselves are IPv6's unspecified and loopback addresses
 *   ::ffff:a.b.c.d   IPv4-mapped (::ffff:0:0/96)
 *   ::ffff:0:a.b.c.d IPv4-translated (::ffff:0:0:0/96, RFC 6145)
 *   64:ff9b::a.b.c.d NAT64 well-known prefix (64:ff9b::/96, RFC 6052)
 *   64:ff9b:1::/48   NAT64 local-use prefix (RFC 8215): the address in bits 48-63 and 72-87
 *   2002:AABB:CCDD:: 6to4 (2002::/16, RFC 3056): the address in bits 16-47
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const b = ip.toByteArray();
  const v4 = (...bytes: number[]) => new ipaddr.IPv4(bytes);
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return v4(b[12]!, b[13]!, b[14]!, b[15]!);
    case 'rfc6052':
      // 64:ff9b:1::/48 differs from 64:ff9b::/96 in its third group.
      return b[4] === 0 && b[5] === 1 ? v4(b[6]!, b[7]!, b[9]!, b[10]!) : v4(b[12]!, b[13]!, b[14]!, b[15]!);
    case '6to4':
      return v4(b[2]!, b[3]!, b[4]!, b[5]!);
    case 'unspecified':
    case 'loopback':
      return undefined;
  }
  if (b.slice(0, 12).every((x) => x === 0)) return v4(b[12]!, b[13]!, b[14]!, b[15]!);
  return undefined;
}

function describe(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private network',
    uniqueLocal: 'unique-local',
    carrierGradeNat: 'shared (carrier-grade NAT)',
    linkLocal: 'link-local',
    unspecified: 'unspecified',
    broadcast: 'broadcast',
    multicast: 'multicast',
  };
  return names[range] ?? `reserved (${range})`;
}

/**
 * The checks that need no DNS: an absolute http(s) URL without credentials, https unless
 * private URLs are allowed, and a literal IP host that is allowed. Throws EndpointRefused.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointRefused('Input should be a valid URL', 'url_parsing');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new EndpointRefused('The endpoint must be an https URL', 'url_parsing');
  if (url.protocol === 'http:' && !allowPrivate) throw new EndpointRefused('The endpoint must use https, not plain http');
  if (url.username || url.password) throw new EndpointRefused('The endpoint URL must not carry a user name or password');
  if (!url.hostname) throw new EndpointRefused('The endpoint URL has no host', 'url_parsing');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    const problem = addressProblem(host, allowPrivate);
    if (problem) throw new EndpointRefused(`The endpoint is ${problem}, which webhooks may not reach`);
  }
  return url;
}

export type Lookup = (
  hostname: string,
  options: { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemLookup: Lookup = (hostname, options, callback) => dnsLookup(hostname, options, callback);

function resolveAll(hostname: string, lookup: Lookup): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    lookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );
}

/**
 * Every check, DNS included: a name is refused when any of its addresses is (an attacker
 * controlling the name picks which one a client tries). A name that does not resolve is
 * refused too: nothing could be delivered to it, and it cannot be checked.
 */
export async function checkEndpoint(raw: string, allowPrivate: boolean, lookup: Lookup = systemLookup): Promise<URL> {
  const url = checkEndpointUrl(raw, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return url;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host, lookup);
  } catch {
    throw new EndpointRefused(`The endpoint's host name ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new EndpointRefused(`The endpoint's host name ${host} does not resolve`);
  for (const a of addresses) {
    const problem = addressProblem(a.address, allowPrivate);
    if (problem) throw new EndpointRefused(`The endpoint's host name resolves to ${problem}, which webhooks may not reach`);
  }
  return url;
}

type NetLookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the sockets of deliveries: resolves, refuses the connection when any address
 * is not allowed, and hands the socket only addresses that were checked. This is the check on
 * the address actually connected to, whatever the name resolved to when the webhook was saved.
 */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = systemLookup) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: NetLookupCallback): void => {
    lookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const wanted =
        options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      for (const a of addresses) {
        const problem = addressProblem(a.address, allowPrivate);
        if (problem) {
          const refused = Object.assign(new Error(`refused: ${hostname} resolves to ${problem}`), { code: 'EWEBHOOKADDRESS' });
          return callback(refused, []);
        }
      }
      if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, wanted);
      return callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
}
