import { reportScopeOf } from './reports';
import type { ReportScope } from '../../entities/report.entity';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { executeBound } from '../../db/bound-statement';
import { readOnReplica } from '../../db/read-replica';
import { SnapshotReader } from '../../db/snapshot-reader';
import { DEFAULT_BROKER_NAME } from '../../entities/broker-settings.entity';
import type { ReportFormat, ReportType } from '../../entities/report.entity';
import type { QuoteStore } from '../prices/quote-store';
import { writeCsv } from './formats/csv-format';
import { writeJson } from './formats/json-format';
import { writePdf } from './formats/pdf-format';
import type { ReportDocument, WriteOutcome } from './report-document';
import { documentFor } from './report-sources';
import { ChunkWriter, clearChunks } from './report-store';
import { BROKER_NAME, COMPLETE_BUILD, FAIL_BUILD, START_BUILD } from './reports.queries';

export type BuildOutcome = { status: 'completed'; rows: number; bytes: number } | { status: 'skipped' };

/**
 * Builds a report's file: claims the report (a finished one is left alone, so a repeated job
 * does nothing), drops what an earlier attempt stored, streams the rows from one snapshot
 * through the format's writer into the chunk store, then, in one statement after the last
 * chunk, records the size and marks it completed. Until then the download answers 409.
 */
export async function buildReport(
  em: EntityManager,
  quotes: QuoteStore,
  reportId: string,
  logger?: Logger,
): Promise<BuildOutcome> {
  const [claimed] = await executeBound<{ type: ReportType; format: ReportFormat; params: unknown; scope: ReportScope | null }>(
    em,
    START_BUILD.bind({ id: reportId }),
  );
  if (!claimed) return { status: 'skipped' };
  const [settings] = await executeBound<{ broker_name: string }>(em, BROKER_NAME.bind({}));
  // The rows come from the read replica once it has replayed everything committed before the
  // build began (the report includes what was booked before it was asked for); the chunks are
  // written to the primary. A replica lost mid-build starts the file again on the primary.
  const { outcome, out } = await readOnReplica(em, 'primary', async (readEm) => {
    await clearChunks(em, reportId);
    const reader = await SnapshotReader.open(readEm);
    const out = new ChunkWriter(em, reportId);
    try {
      const doc = await documentFor(claimed.type, claimed.params, {
        em: readEm,
        reader,
        quotes,
        now: new Date(),
        scope: reportScopeOf(claimed.scope),
      });
      return { outcome: await write(claimed.format, doc, out, settings?.broker_name ?? DEFAULT_BROKER_NAME, reader), out };
    } finally {
      await Promise.all([reader.close(), out.settled()]);
    }
  });
  await executeBound(em, COMPLETE_BUILD.bind({ id: reportId, rows: outcome.rows, bytes: out.bytes }));
  logger?.info({ report_id: reportId, rows: outcome.rows, bytes: out.bytes }, 'report built');
  return { status: 'completed', rows: outcome.rows, bytes: out.bytes };
}

function write(
  format: ReportFormat,
  doc: ReportDocument,
  out: ChunkWriter,
  brokerName: string,
  reader: SnapshotReader,
): Promise<WriteOutcome> {
  switch (format) {
    case 'csv':
      return writeCsv(doc, out, (statement) => reader.copyCsv(statement));
    case 'json':
      return writeJson(doc, out);
    case 'pdf':
      return writePdf(doc, out, brokerName);
  }
}

/** Records why a build failed for good; its partial file goes, so nothing half-written remains. */
export async function failBuild(em: EntityManager, reportId: string, error: string): Promise<void> {
  await clearChunks(em, reportId);
  await executeBound(em, FAIL_BUILD.bind({ id: reportId, error: error.slice(0, 2000) }));
}
