import { Writable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../db/bound-statement';
import { DELETE_CHUNKS, INSERT_CHUNK, READ_CHUNK } from './reports.queries';

/** About 1 MiB a row: few rows for a large file, small enough that neither side holds much at once. */
export const CHUNK_BYTES = 1024 * 1024;

/**
 * The file store: report_chunks in Postgres, which every API and worker machine already
 * reaches (no shared disk, no extra service). The writer stores each MiB as it fills, so a
 * build holds at most one chunk of its file; each insert is its own statement, and the
 * report only becomes downloadable when the build marks it completed after the last one.
 */
export class ChunkWriter extends Writable {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  /** The store in flight, if any: a build that failed waits for it before it starts the file again. */
  private storing: Promise<void> = Promise.resolve();
  bytes = 0;

  constructor(
    private readonly em: EntityManager,
    private readonly reportId: string,
  ) {
    super({ highWaterMark: CHUNK_BYTES });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.bytes += chunk.length;
    if (this.pendingBytes < CHUNK_BYTES) return done();
    this.storing = this.store(false);
    this.storing.then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.storing = this.store(true);
    this.storing.then(() => done(), done);
  }

  /** Resolves once no chunk insert is in flight, whatever its outcome. */
  async settled(): Promise<void> {
    await this.storing.catch(() => undefined);
  }

  /** Stores whole chunks, and with `all` the remainder too. */
  private async store(all: boolean): Promise<void> {
    let data = Buffer.concat(this.pending, this.pendingBytes);
    while (data.length >= CHUNK_BYTES || (all && data.length > 0)) {
      const piece = data.subarray(0, CHUNK_BYTES);
      await executeBound(this.em, INSERT_CHUNK.bind({ report_id: this.reportId, seq: this.seq++, data: piece }));
      data = data.subarray(piece.length);
    }
    this.pending = data.length ? [Buffer.from(data)] : [];
    this.pendingBytes = data.length;
  }
}

/** Removes what an earlier attempt stored, so a retry writes the file from its start. */
export async function clearChunks(em: EntityManager, reportId: string): Promise<void> {
  await executeBound(em, DELETE_CHUNKS.bind({ report_id: reportId }));
}

/** The file's chunks in order, one read (about 1 MiB) at a time. */
export async function* readChunks(em: EntityManager, reportId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const [row] = await executeBound<{ data: Buffer }>(em, READ_CHUNK.bind({ report_id: reportId, seq }));
    if (!row) return;
    yield row.data;
  }
}
