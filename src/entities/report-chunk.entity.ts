import { type Ref } from '@mikro-orm/core';
import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Report } from './report.entity';

/**
 * One piece (about 1 MiB) of a report's file, in order of `seq`. Written with SQL by the
 * reports worker as the file is produced and read back one piece at a time by the download:
 * Postgres is the store every API and worker machine already reaches (docs/architecture.md).
 */
@Entity({ tableName: 'report_chunks' })
export class ReportChunk {
  @ManyToOne({ entity: () => Report, ref: true, primary: true, deleteRule: 'cascade' })
  report!: Ref<Report>;

  @PrimaryKey({ type: 'integer', autoincrement: false })
  seq!: number;

  @Property({ type: 'blob', columnType: 'bytea' })
  data!: Buffer;
}
