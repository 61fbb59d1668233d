import type { Logger } from 'pino';
import type { Identity } from '../../domain/identity/identity';
import { liveEventsChannel, type LiveEvent } from '../../domain/streams/live-feed';
import { StreamSlots } from '../../domain/streams/stream-slots';
import type { MikroORM } from '@mikro-orm/postgresql';
import { quoteChannel, type Quote, type QuoteStore } from '../../domain/prices/quote-store';
import { AccountWatcher } from './account-watcher';
import { num } from '../../platform/decimal';
import type { Metrics } from '../../platform/metrics';
import { withTimeout } from '../../platform/with-timeout';
import { closeRedis, createRedis, type RedisClient, type RedisTarget } from '../../platform/redis';
import { plainFrame, type SseStream, type StreamKind } from './sse-stream';
import {
  assignmentInScope,
  customerScopeOf,
  uuidArrayLiteral,
  type CustomerAssignment,
  type CustomerScope,
} from '../../platform/customer-scope';

/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEP_ALIVE_MS = 15_000;
/** How often open streams' sessions are checked: a revoked one ends within this (and a round trip). */
const REVOCATION_CHECK_MS = 400;
/** A stream request waits this long for the live feed's subscription, then answers 503. */
const SUBSCRIBE_TIMEOUT_MS = 5000;

export interface StreamHubOptions {
  redis: RedisTarget;
  prefix: string;
  logger: Logger;
  metrics: Metrics;
  identity: Identity;
  /** Producer-side connection, for the per-session slots. */
  commands: RedisClient;
  /** For account.updated (AccountWatcher); without them customer streams carry domain events only. */
  orm?: MikroORM;
  quotes?: QuoteStore;
}

/**
 * The streams one API process serves, and its single subscription to the live feed (Redis
 * pub/sub: the events channel the outbox relay publishes to, and the quotes channel). Each
 * message is parsed once and each event's frame built once, then handed to the streams that
 * match it, found through indexes (by customer, by symbol) rather than by asking every stream.
 *
 * The subscription opens with the first stream. When it breaks, every event stream ends: its
 * client reconnects with Last-Event-ID and the replay covers what pub/sub dropped meanwhile.
 */
export class StreamHub {
  readonly slots: StreamSlots;
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<void> | undefined;
  private readonly all = new Set<SseStream>();
  private readonly byCustomer = new Map<string, Set<SseStream>>();
  private readonly backoffice = new Set<SseStream>();
  /** Back-office streams of staff limited to their customers, with the scope each applies. */
  private readonly scopedBackoffice = new Map<SseStream, CustomerScope>();
  /** Scoped deliveries run one batch after another, so a scoped stream keeps the feed's order. */
  private scopedChain: Promise<void> = Promise.resolve();
  private readonly bySymbol = new Map<string, Set<SseStream>>();
  private readonly allSymbols = new Set<SseStream>();
  private timers: NodeJS.Timeout[] = [];
  private checking = false;
  private closed = false;
  /** Listeners for each customer event batch (the account watcher). */
  readonly customerListeners: Array<(customerIds: Set<string>) => void> = [];
  readonly quoteListeners: Array<(quotes: Quote[]) => void> = [];

  /** account.updated for the customers streaming here. */
  readonly accounts: AccountWatcher | undefined;

  constructor(private readonly options: StreamHubOptions) {
    this.slots = new StreamSlots(options.commands, options.prefix);
    this.accounts =
      options.orm && options.quotes ? new AccountWatcher(this, options.orm, options.quotes, options.logger) : undefined;
  }

  /** Subscribes (once) to the live feed; resolves when Redis has confirmed the subscription. */
  ready(): Promise<void> {
    // A failed subscription is tried again by the next stream, not remembered.
    return (this.subscribed ??= this.subscribe().catch((err: unknown) => {
      this.subscribed = undefined;
      const sub = this.subscriber;
      this.subscriber = undefined;
      if (sub) void closeRedis(sub).catch(() => undefined);
      throw err;
    }));
  }

  private async subscribe(): Promise<void> {
    const { logger } = this.options;
    const sub = createRedis(this.options.redis, 'worker', logger);
    this.subscriber = sub;
    const events = liveEventsChannel(this.options.prefix);
    const quotes = quoteChannel(this.options.prefix);
    sub.on('message', (channel: string, message: string) => {
      try {
        if (channel === events) this.onEvents(JSON.parse(message) as LiveEvent[]);
        else if (channel === quotes) this.onQuotes(JSON.parse(message) as Quote[]);
      } catch (err) {
        logger.warn({ err: (err as Error).message, channel }, 'live feed message could not be handled');
      }
    });
    let connected = false;
    sub.on('ready', () => {
      // ioredis re-subscribes after a reconnect, but what was published meanwhile is gone.
      if (connected) this.endEventStreams('live feed reconnected');
      connected = true;
    });
    await withTimeout(sub.subscribe(events, quotes), SUBSCRIBE_TIMEOUT_MS);
    this.timers.push(setInterval(() => this.keepAlive(), KEEP_ALIVE_MS).unref());
    this.timers.push(setInterval(() => void this.checkSessions(), REVOCATION_CHECK_MS).unref());
  }

  add(stream: SseStream): void {
    this.all.add(stream);
    if (stream.kind === 'customer') indexAdd(this.byCustomer, stream.filter.customerId!, stream);
    else if (stream.kind === 'backoffice') {
      const scope = customerScopeOf(stream.caller);
      if (scope.staff) this.scopedBackoffice.set(stream, scope);
      else this.backoffice.add(stream);
    } else if (stream.filter.symbols) for (const s of stream.filter.symbols) indexAdd(this.bySymbol, s, stream);
    else this.allSymbols.add(stream);
    this.options.metrics.streamsOpen.inc({ kind: stream.kind });
  }

  remove(stream: SseStream): void {
    if (!this.all.delete(stream)) return;
    if (stream.kind === 'customer') indexRemove(this.byCustomer, stream.filter.customerId!, stream);
    else if (stream.kind === 'backoffice') {
      this.backoffice.delete(stream);
      this.scopedBackoffice.delete(stream);
    } else if (stream.filter.symbols) for (const s of stream.filter.symbols) indexRemove(this.bySymbol, s, stream);
    else this.allSymbols.delete(stream);
    this.options.metrics.streamsOpen.dec({ kind: stream.kind });
    void this.slots.release(stream.holder, stream.id).catch(() => undefined);
  }

  sent(kind: StreamKind, n: number): void {
    this.options.metrics.streamEventsSent.inc({ kind }, n);
  }

  /** Whether any stream of this customer is open here (the account watcher's interest). */
  watches(customerId: string): boolean {
    return this.byCustomer.has(customerId);
  }

  customerStreams(customerId: string): ReadonlySet<SseStream> | undefined {
    return this.byCustomer.get(customerId);
  }

  private onEvents(events: LiveEvent[]): void {
    const customers = new Set<string>();
    for (const e of events) {
      if (e.customer_id) {
        const streams = this.byCustomer.get(e.customer_id);
        if (streams) {
          customers.add(e.customer_id);
          for (const s of streams) s.push(e);
        }
      }
      for (const s of this.backoffice) if (!s.filter.types || s.filter.types.has(e.type)) s.push(e);
    }
    if (customers.size) for (const l of this.customerListeners) l(customers);
    if (this.scopedBackoffice.size) this.scopedChain = this.scopedChain.then(() => this.deliverScoped(events));
  }

  /**
   * A batch to the back-office streams of staff limited to their customers: the manager and
   * team of the batch's customers are read in one statement, and an event about a customer
   * outside a stream's scope is dropped for it. Without a database (or when it fails) only the
   * events that concern no customer go out: a scoped stream never errs towards showing more.
   */
  private async deliverScoped(events: LiveEvent[]): Promise<void> {
    const ids = [...new Set(events.map((e) => e.customer_id).filter((id): id is string => id !== null))];
    const assignments = new Map<string, CustomerAssignment>();
    if (ids.length && this.options.orm) {
      try {
        const rows = await this.options.orm.em
          .fork()
          .execute<Array<{ id: string; account_manager_id: string | null; team_id: string | null }>>(
            'select id, account_manager_id, team_id from customers where id = any(?::uuid[])',
            [uuidArrayLiteral(ids)],
          );
        for (const r of rows) assignments.set(r.id, { id: r.id, accountManagerId: r.account_manager_id, teamId: r.team_id });
      } catch (err) {
        this.options.logger.warn({ err: (err as Error).message }, 'scoped stream delivery could not read assignments');
      }
    }
    for (const e of events) {
      const customer = e.customer_id === null ? undefined : assignments.get(e.customer_id);
      for (const [s, scope] of this.scopedBackoffice) {
        if (s.filter.types && !s.filter.types.has(e.type)) continue;
        if (e.customer_id === null || (customer && assignmentInScope(scope, customer))) s.push(e);
      }
    }
  }

  /** The current quote, sent when a quote stream opens. */
  quoteFrame(stream: SseStream, q: Quote): void {
    stream.latestOnly(q.symbol, quoteFrame(q));
  }

  private onQuotes(quotes: Quote[]): void {
    for (const q of quotes) {
      const frame = quoteFrame(q);
      for (const s of this.bySymbol.get(q.symbol) ?? []) s.latestOnly(q.symbol, frame);
      for (const s of this.allSymbols) s.latestOnly(q.symbol, frame);
    }
    for (const l of this.quoteListeners) l(quotes);
  }

  private keepAlive(): void {
    for (const s of this.all) s.control(': keep-alive\n\n');
    const slots = [...this.all].map((s) => ({ holder: s.holder, streamId: s.id }));
    void this.slots.refresh(slots).catch(() => undefined);
  }

  /**
   * Ends the streams whose session has been revoked (a logout, a deactivated user: both write
   * a tombstone to the auth cache first) or whose staff caller lost `view_events`: one MGET for
   * every session with an open stream here.
   */
  private async checkSessions(): Promise<void> {
    if (this.checking || this.all.size === 0) return;
    this.checking = true;
    try {
      const bySession = new Map<string, SseStream[]>();
      for (const s of this.all) {
        if (s.caller.kind === 'api_token') continue;
        const list = bySession.get(s.caller.sessionId) ?? [];
        list.push(s);
        bySession.set(s.caller.sessionId, list);
      }
      const ids = [...bySession.keys()];
      const states = await this.options.identity.sessions.getMany(ids);
      states.forEach((state, i) => {
        if (!state) return;
        for (const s of bySession.get(ids[i]!)!) {
          const lost = state.state === 'revoked' || (s.kind === 'backoffice' && !state.permissions.includes('view_events'));
          if (lost) s.end();
        }
      });
      // API tokens are cached by hash, not id: a revoked one is seen through its tombstone by the token's hash.
      for (const s of this.all) {
        if (s.caller.kind !== 'api_token' || !s.tokenHash) continue;
        const [state] = await this.options.identity.apiTokens.getMany([s.tokenHash]);
        if (state?.state === 'revoked' || (state && !state.permissions.includes('view_events'))) s.end();
      }
    } catch {
      // Redis unreachable: the live feed is down too, and its streams end on their own.
    } finally {
      this.checking = false;
    }
  }

  private endEventStreams(reason: string): void {
    this.options.logger.warn({ reason }, 'ending event streams: clients resume with Last-Event-ID');
    for (const s of this.all) if (s.kind !== 'quotes') s.end();
  }

  /** Graceful shutdown: ends every stream (clients reconnect to another process), then unsubscribes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.accounts?.close();
    for (const s of [...this.all]) {
      s.control(': server shutting down\n\n');
      s.end();
    }
    if (this.subscriber) await closeRedis(this.subscriber);
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

function quoteFrame(q: Quote): string {
  return plainFrame('quote', { symbol: q.symbol, bid: num(q.bid), ask: num(q.ask), time: q.updated_at });
}

function indexAdd<K>(index: Map<K, Set<SseStream>>, key: K, stream: SseStream): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(stream);
}

function indexRemove<K>(index: Map<K, Set<SseStream>>, key: K, stream: SseStream): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(stream);
  if (set.size === 0) index.delete(key);
}
