import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the request in progress says about where it comes from: the client address as
 * TRUST_PROXY lets it be known, and the device id its SDK sent. Kept in async context once per
 * request, so policy deep in a money path (a posting hook) reads them without every route
 * passing them down; empty outside a request (a job, a worker).
 */
export interface RequestSignals {
  ip: string | null;
  deviceId: string | null;
}

const context = new AsyncLocalStorage<RequestSignals>();

/** A device id is an opaque SDK fingerprint: short, printable, no spaces. Anything else counts as none. */
const DEVICE_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

export function deviceIdOf(header: string | string[] | undefined): string | null {
  return typeof header === 'string' && DEVICE_ID.test(header) ? header : null;
}

export function runWithSignals<T>(signals: RequestSignals, fn: () => T): T {
  return context.run(signals, fn);
}

export function currentSignals(): RequestSignals {
  return context.getStore() ?? { ip: null, deviceId: null };
}
