import { Migration } from '@mikro-orm/migrations';

/**
 * Events get a publication number: the order the relay handed them over in, which is the
 * order live streams carry them. `seq` is write order, and transactions commit out of it (an
 * event numbered 100 can commit after 101), so a stream resuming "after 101" by `seq` would
 * skip 100. Resuming by publication number cannot: the relay hands batches over one at a
 * time, under its lock, numbering each batch's events after the last.
 *
 * Outside a transaction, so the index on this large table is built CONCURRENTLY (see
 * docs/operations.md); every statement is safe to run again.
 */
export class Migration20261127100000_PublicationOrder extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql('create sequence if not exists "domain_event_publication_seq";');
    this.addSql('alter table "domain_events" add column if not exists "publication_seq" bigint null;');
    // Events already handed over keep their write order as their publication order.
    this.addSql(
      `update "domain_events" d set "publication_seq" = o.n
         from (select "id", coalesce((select max("publication_seq") from "domain_events"), 0)
                            + row_number() over (order by "seq") as n from "domain_events"
                where "published_at" is not null and "publication_seq" is null) o
        where d."id" = o."id";`,
    );
    this.addSql(
      `select setval('domain_event_publication_seq', greatest((select max("publication_seq") from "domain_events"), 1));`,
    );
    this.addSql(
      'create unique index concurrently if not exists "domain_events_publication_seq_unique" on "domain_events" ("publication_seq");',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "domain_events_publication_seq_unique";');
    this.addSql('alter table "domain_events" drop column if exists "publication_seq";');
    this.addSql('drop sequence if exists "domain_event_publication_seq";');
  }
}
