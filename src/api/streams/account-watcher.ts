import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { figuresOf, loadWatchedAccounts, type WatchedAccount } from '../../domain/streams/account-figures';
import type { QuoteStore } from '../../domain/prices/quote-store';
import { plainFrame } from './sse-stream';
import type { StreamHub } from './stream-hub';

/** `account.updated` at most this often per account: equity moves with every quote. */
export const ACCOUNT_UPDATE_EVERY_MS = 250;
/** Customers refreshed at once per round (each is a few Redis reads, or a few queries after an event). */
const CONCURRENCY = 16;

interface Watched {
  accounts: WatchedAccount[];
  symbols: Set<string>;
  /** The last figures sent per login, as JSON: an unchanged account sends nothing. */
  last: Map<number, string>;
  loaded: boolean;
}

/**
 * `account.updated` for the customers with a stream open on this process, computed here,
 * only for them: no process computes equity for accounts nobody watches. A customer's domain
 * event (a fill, a deposit, a transfer, ...) marks its accounts for a reload from Postgres;
 * a quote of a symbol one of its accounts holds marks them for repricing (Redis only). Every
 * 250 ms the marked customers are worked through and each account whose balance, equity or
 * margin changed gets one event: so at most one per account per 250 ms, whatever the tick rate.
 */
export class AccountWatcher {
  private readonly watched = new Map<string, Watched>();
  private readonly reload = new Set<string>();
  private readonly reprice = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly hub: StreamHub,
    private readonly orm: MikroORM,
    private readonly quotes: QuoteStore,
    private readonly logger: Logger,
  ) {
    hub.customerListeners.push((ids) => {
      for (const id of ids) if (this.watched.has(id)) this.reload.add(id);
    });
    hub.quoteListeners.push((quotes) => {
      if (this.watched.size === 0) return;
      for (const [id, w] of this.watched) if (quotes.some((q) => w.symbols.has(q.symbol))) this.reprice.add(id);
    });
  }

  /** A customer stream opened: its accounts' current figures become the baseline changes are measured from. */
  watch(customerId: string): void {
    if (!this.watched.has(customerId)) {
      this.watched.set(customerId, { accounts: [], symbols: new Set(), last: new Map(), loaded: false });
      this.reload.add(customerId);
    }
    this.timer ??= setInterval(() => void this.round(), ACCOUNT_UPDATE_EVERY_MS).unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const id of this.watched.keys()) if (!this.hub.watches(id)) this.forget(id);
      const due = [...new Set([...this.reload, ...this.reprice])];
      const reloads = new Set(this.reload);
      this.reload.clear();
      this.reprice.clear();
      const em = this.orm.em.fork() as EntityManager;
      for (let i = 0; i < due.length; i += CONCURRENCY) {
        await Promise.all(due.slice(i, i + CONCURRENCY).map((id) => this.refresh(em, id, reloads.has(id))));
      }
    } finally {
      this.running = false;
    }
  }

  private forget(id: string): void {
    this.watched.delete(id);
    this.reload.delete(id);
    this.reprice.delete(id);
  }

  private async refresh(em: EntityManager, customerId: string, reload: boolean): Promise<void> {
    const w = this.watched.get(customerId);
    if (!w) return;
    try {
      if (reload) {
        w.accounts = await loadWatchedAccounts(em, customerId);
        w.symbols = new Set(w.accounts.flatMap((a) => a.symbols));
      }
      const baseline = !w.loaded;
      w.loaded = true;
      for (const account of w.accounts) {
        const figures = await figuresOf(em, this.quotes, account);
        const text = JSON.stringify(figures);
        if (w.last.get(figures.login) === text) continue;
        w.last.set(figures.login, text);
        if (baseline) continue;
        const frame = plainFrame('account.updated', figures);
        for (const s of this.hub.customerStreams(customerId) ?? []) s.latestOnly(`account:${figures.login}`, frame);
      }
    } catch (err) {
      // Marked again so the next round retries; the stream itself carries on.
      this.reload.add(customerId);
      this.logger.warn({ err: (err as Error).message }, 'account figures could not be computed for a stream');
    }
  }
}
