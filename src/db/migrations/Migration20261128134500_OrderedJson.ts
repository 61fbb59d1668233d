import { Migration } from '@mikro-orm/migrations';

/**
 * An event's data and an idempotent request's stored answer are kept as `json`, the text as
 * written, instead of `jsonb`, which reorders an object's keys: a webhook body, a stream event
 * and a replayed answer then carry the fields in the order of the REST view, as the first
 * answer did. Rows written before keep jsonb's order. The change rewrites both tables once.
 */
export class Migration20261128134500_OrderedJson extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table domain_events alter column data type json using data::json;');
    this.addSql('alter table idempotency_keys alter column response_body type json using response_body::json;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table domain_events alter column data type jsonb using data::jsonb;');
    this.addSql('alter table idempotency_keys alter column response_body type jsonb using response_body::jsonb;');
  }
}
