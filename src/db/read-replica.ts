import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { namedStatement } from '../platform/named-sql';
import { withTimeout } from '../platform/with-timeout';
import { executeBound } from './bound-statement';

/**
 * The one way heavy reads reach a streaming read replica (DATABASE_REPLICA_URL): report and
 * statement builds, risk previews, stream replays, the daily snapshot lists, the CRM timeline
 * and the event feed call `readOnReplica(em, minLsn, read)`, and `read` is handed an
 * EntityManager of the replica, or the primary's own `em` whenever the replica cannot serve:
 *
 * - no replica configured, or `em` inside a transaction (a money transaction reads what it
 *   locks, on its own connection): the primary, as if this module were not there;
 * - `minLsn`: the read must include everything committed up to that WAL position. `'primary'`
 *   takes the primary's current position (`pg_current_wal_lsn()`) at the call: the read then
 *   includes every commit the caller could have seen or made before it (read-your-writes
 *   after a POST; a report includes the event that was committed before it was asked for).
 *   The replica is given REPLICA_WAIT_MS to replay that far; then the read goes to the primary;
 * - the replica further behind than REPLICA_MAX_LAG_MS at its last probe (plus the time since,
 *   as it can fall no further behind than the clock moves), or not answering: the primary,
 *   counted in `db_replica_fallbacks_total{reason}`; the first read of an outage logs a line
 *   at warn, and the probe logs when it answers again.
 *
 * `read` may run twice (on the replica, then on the primary when the replica drops in the
 * middle), so it only reads, or starts what it writes over (a report build clears its chunks).
 * The replica refuses writes in any case: a standby's transactions are read-only.
 */

export type ReplicaState = 'streaming' | 'lagging' | 'down' | 'unknown';
export type FallbackReason = 'down' | 'lagging' | 'behind' | 'failed';

export interface ReplicaStatus {
  state: ReplicaState;
  /** How far the replica was behind the primary at the last probe; null when it did not answer. */
  lag_ms: number | null;
  /** When the last probe answered or failed. */
  checked_at: string | null;
}

export interface ReadReplicaOptions {
  maxLagMs: number;
  waitMs: number;
  logger: Logger;
  /** Called once per read sent back to the primary (the metric). */
  onFallback?: (reason: FallbackReason) => void;
  /** How often the background probe measures the lag (default 1 s). */
  probeIntervalMs?: number;
}

/** Where the primary's WAL stands: every commit that has returned lies at or before it. */
const PRIMARY_LSN = namedStatement<Record<string, never>>('select pg_current_wal_lsn()::text as lsn');

/** The same, with the primary's system identifier, which every replica made from it shares. */
const PRIMARY_PROBE = namedStatement<Record<string, never>>(
  'select pg_current_wal_lsn()::text as lsn, (select system_identifier::text from pg_control_system()) as system',
);

/**
 * The replica's side of a probe: whether it still replays (a promoted replica is a primary of
 * its own, never read), how far it has replayed, and the age of the last transaction it
 * replayed (the lag when the probes so far say nothing better).
 */
const REPLICA_PROBE = namedStatement<Record<string, never>>(
  `select pg_is_in_recovery() as in_recovery, pg_last_wal_replay_lsn()::text as replayed,
          extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000 as replay_age_ms,
          (select system_identifier::text from pg_control_system()) as system`,
);

const REPLAYED = namedStatement<{ lsn: string }>('select coalesce(pg_last_wal_replay_lsn() >= :lsn::pg_lsn, false) as reached');

/** A WAL position (`16/B374D848`) as a number, to compare two. */
export function lsnValue(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

const DAY_MS = 86_400_000;

/** How many of the primary's recent positions a probe keeps to date the replica's. */
const SAMPLES = 64;

/** How often a read waiting for the replica asks it again how far it has replayed. */
const BARRIER_POLL_MS = 10;
/** A probe that takes longer than this counts as the replica not answering. */
const PROBE_TIMEOUT_MS = 1000;

/** Errors that say the replica (not the statement) failed: the read is worth repeating on the primary. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, or not accepting reads
  '3D000', // the database does not exist there (yet): a database just created on the primary
  '40001', // canceled on a conflict with recovery (a vacuum replayed under a long read)
]);

export function isReplicaUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|timed out after|connect ECONNREFUSED/i.test(message);
}

export class ReadReplica {
  private lagMs: number | null = null;
  private checkedAt: number | null = null;
  private up: boolean | null = null;
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private closed = false;
  /** The primary's WAL position at each recent probe, and when (this process's clock). */
  private readonly samples: Array<{ lsn: bigint; at: number }> = [];

  constructor(
    /** The ORM opened on DATABASE_REPLICA_URL. */
    private readonly replicaOrm: MikroORM,
    /** The primary's ORM: where the probe reads the primary's WAL position. */
    private readonly primaryOrm: MikroORM,
    private readonly options: ReadReplicaOptions,
  ) {}

  /** Probes now and then every probeIntervalMs until close. */
  start(): void {
    const tick = () => {
      void this.probe().finally(() => {
        if (!this.closed) this.timer = setTimeout(tick, this.options.probeIntervalMs ?? 1000).unref();
      });
    };
    tick();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.probing?.catch(() => undefined);
    await this.replicaOrm.close(true);
  }

  status(): ReplicaStatus {
    return {
      state: this.up === null ? 'unknown' : !this.up ? 'down' : this.withinBound() ? 'streaming' : 'lagging',
      lag_ms: this.up ? this.lagMs : null,
      checked_at: this.checkedAt === null ? null : new Date(this.checkedAt).toISOString(),
    };
  }

  /** Measures the lag once (concurrent callers share the probe in flight). */
  probe(): Promise<void> {
    this.probing ??= this.measure().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /**
   * The lag, without trusting either server's clock: a replica that has replayed up to a
   * position the primary had reached at time T holds everything the primary held then, so it
   * is behind by at most now - T: 0 when it has replayed the primary's position of this probe,
   * else the age of the newest earlier sample it has passed. With no such sample (it is behind
   * every probe this process remembers) the age of the last transaction it replayed is the
   * measure.
   */
  private async measure(): Promise<void> {
    const at = Date.now();
    let primary: bigint;
    let system: string;
    try {
      const [row] = await executeBound<{ lsn: string; system: string }>(
        this.primaryOrm.em.fork() as EntityManager,
        PRIMARY_PROBE.bind({}),
      );
      primary = lsnValue(row!.lsn);
      system = row!.system;
    } catch {
      return; // the primary not answering says nothing about the replica
    }
    this.samples.push({ lsn: primary, at });
    if (this.samples.length > SAMPLES) this.samples.shift();
    try {
      const [row] = await withTimeout(
        executeBound<{ in_recovery: boolean; replayed: string | null; replay_age_ms: number | string | null; system: string }>(
          this.replicaEm(),
          REPLICA_PROBE.bind({}),
        ),
        PROBE_TIMEOUT_MS,
      );
      if (!row?.in_recovery || row.replayed === null)
        throw Object.assign(new Error('the replica is not replaying (promoted?)'), { code: 'NOT_A_REPLICA' });
      // A standby of some other server: its positions say nothing about this primary's.
      if (row.system !== system)
        throw Object.assign(new Error('the replica was not made from this primary (another system identifier)'), {
          code: 'NOT_THIS_PRIMARY',
        });
      const replayed = lsnValue(row.replayed);
      const passed = this.samples.filter((s) => s.lsn <= replayed).pop();
      // Nothing replayed since it started, and no probe passed: as far behind as a day, for all we know.
      const age = row.replay_age_ms === null ? DAY_MS : Math.min(DAY_MS, Math.max(0, Number(row.replay_age_ms)));
      this.lagMs = replayed >= primary ? 0 : passed ? at - passed.at : Math.round(age);
      this.checkedAt = at;
      if (this.up === false) this.options.logger.info({ lag_ms: this.lagMs }, 'read replica answers again: heavy reads go to it');
      this.up = true;
    } catch (err) {
      this.markDown(err);
    }
  }

  private markDown(err: unknown): void {
    this.checkedAt = Date.now();
    if (this.up !== false)
      this.options.logger.warn(
        { err: (err as Error).message, code: (err as { code?: string }).code },
        'read replica not answering: heavy reads go to the primary',
      );
    this.up = false;
    this.lagMs = null;
  }

  /** Behind by no more than the bound: the lag measured, plus the time since (lag grows no faster than the clock). */
  private withinBound(): boolean {
    if (this.lagMs === null || this.checkedAt === null) return false;
    return this.lagMs + (Date.now() - this.checkedAt) <= this.options.maxLagMs;
  }

  private replicaEm(): EntityManager {
    return this.replicaOrm.em.fork() as EntityManager;
  }

  private async primaryLsn(em: EntityManager): Promise<string> {
    const [row] = await executeBound<{ lsn: string }>(em, PRIMARY_LSN.bind({}));
    return row!.lsn;
  }

  /** Polls until the replica has replayed `lsn`; false after waitMs. */
  private async replayed(em: EntityManager, lsn: string): Promise<boolean> {
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      const [row] = await executeBound<{ reached: boolean }>(em, REPLAYED.bind({ lsn }));
      if (row?.reached) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, BARRIER_POLL_MS));
    }
  }

  private fallback<T>(reason: FallbackReason, em: EntityManager, read: (em: EntityManager) => Promise<T>): Promise<T> {
    this.options.onFallback?.(reason);
    return read(em);
  }

  async read<T>(em: EntityManager, minLsn: 'primary' | string | undefined, read: (em: EntityManager) => Promise<T>): Promise<T> {
    // The first reads of a process wait for its first probe: until then nothing says the
    // replica is one of this primary's.
    if (this.up === null) await this.probe();
    if (this.up !== true) return this.fallback('down', em, read);
    if (!this.withinBound()) return this.fallback('lagging', em, read);
    const lsn = minLsn === 'primary' ? await this.primaryLsn(em) : minLsn;
    const replica = this.replicaEm();
    try {
      if (lsn !== undefined && !(await this.replayed(replica, lsn))) return await this.fallback('behind', em, read);
      return await read(replica);
    } catch (err) {
      if (!isReplicaUnavailable(err)) throw err;
      this.markDown(err);
      return this.fallback('failed', em, read);
    }
  }
}

/** What `GET /health` adds when a replica is configured: its state and lag as this process last saw them. */
export function replicaHealth(replica: ReadReplica | undefined): { replica?: ReplicaStatus } {
  return replica ? { replica: replica.status() } : {};
}

/** The replica of each primary ORM (a test process may run several services, each its own). */
const REPLICAS = new WeakMap<object, ReadReplica>();

/** Makes `readOnReplica` on any fork of `orm` use `replica`. */
export function attachReadReplica(orm: MikroORM, replica: ReadReplica): void {
  REPLICAS.set(orm.em.getDriver(), replica);
}

export function replicaOf(em: EntityManager): ReadReplica | undefined {
  return REPLICAS.get(em.getDriver());
}

/**
 * Runs `read` on the read replica when one is configured and fresh enough, else on `em` (the
 * primary). `minLsn`: `'primary'` for "everything committed before this call", a WAL position
 * (`0/16B3748`) for "everything up to this commit", omitted for "no older than
 * REPLICA_MAX_LAG_MS". See the top of this file.
 */
export async function readOnReplica<T>(
  em: EntityManager,
  minLsn: 'primary' | string | undefined,
  read: (em: EntityManager) => Promise<T>,
): Promise<T> {
  const replica = replicaOf(em);
  if (!replica || em.isInTransaction()) return read(em);
  return replica.read(em, minLsn, read);
}
