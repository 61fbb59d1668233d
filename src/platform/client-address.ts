import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

export type TrustFn = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY: which hops may name the client in X-Forwarded-For. `none` (or `false`)
 * trusts no proxy; a number trusts that many hops in front of the service; otherwise a
 * comma-separated list of addresses, CIDR ranges or the names `loopback`, `linklocal` and
 * `uniquelocal`. `true` (trust every hop) is refused: any client could then name its own
 * address and walk around the login throttle. Throws on anything else.
 */
export function compileTrust(setting: string): TrustFn {
  const value = setting.trim();
  if (value === 'none' || value === 'false') return () => false;
  if (value === 'true') throw new Error('"true" would let any client choose its own address; list the proxies instead');
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return proxyaddr.compile(value.split(',').map((part) => part.trim()));
}

/**
 * The client's address: the socket's, unless the socket is a trusted proxy, in which case
 * X-Forwarded-For is read from the right, through trusted hops only. A header with any entry
 * that is not an IP address is ignored altogether (the socket address is used), so a garbage
 * value can never become the key the login throttle counts under. IPv4-mapped IPv6
 * addresses are written as plain IPv4, so one client has one key.
 */
export function clientAddressResolver(trust: TrustFn): (req: IncomingMessage) => string | null {
  return (req) => {
    const socketAddress = req.socket.remoteAddress;
    if (!socketAddress) return null;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined || !trust(socketAddress, 0)) return plain(socketAddress);
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',').map((hop) => hop.trim());
    if (hops.some((hop) => isIP(hop) === 0)) return plain(socketAddress);
    return plain(proxyaddr(req, trust));
  };
}

function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
