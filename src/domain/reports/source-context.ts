import type { CustomerScope } from '../../platform/customer-scope';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SnapshotReader } from '../../db/snapshot-reader';
import type { QuoteStore } from '../prices/quote-store';

/** What a report's document reads from. */
export interface SourceContext {
  em: EntityManager;
  /** Every figure and row of the report comes from this one snapshot. */
  reader: SnapshotReader;
  quotes: QuoteStore;
  /** When the build started: the moment "now" means in the report. */
  now: Date;
  /** Whose rows the report may hold: the recorded scope of the staff user who asked. */
  scope: CustomerScope;
}
