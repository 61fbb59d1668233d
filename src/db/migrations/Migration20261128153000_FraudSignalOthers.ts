import { Migration } from '@mikro-orm/migrations';

/**
 * The counts of other customers seen with a device, an instrument or a destination read the
 * index past the asking customer's own rows (two ranges of customer_id), however often that
 * customer was seen with it; the same indexes serve the links' lookups by value. The new
 * indexes are built before the old ones go, so lookups keep an index throughout.
 */
export class Migration20261128153000_FraudSignalOthers extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index "fraud_signals_device_id_customer_id_index" on "fraud_signals" ("device_id", "customer_id");');
    this.addSql('create index "fraud_signals_instrument_customer_id_index" on "fraud_signals" ("instrument", "customer_id");');
    this.addSql('create index "fraud_signals_destination_customer_id_index" on "fraud_signals" ("destination", "customer_id");');
    this.addSql('drop index "fraud_signals_device_id_created_at_index";');
    this.addSql('drop index "fraud_signals_instrument_index";');
    this.addSql('drop index "fraud_signals_destination_index";');
  }

  override async down(): Promise<void> {
    this.addSql('drop index "fraud_signals_destination_customer_id_index";');
    this.addSql('drop index "fraud_signals_instrument_customer_id_index";');
    this.addSql('drop index "fraud_signals_device_id_customer_id_index";');
    this.addSql('create index "fraud_signals_destination_index" on "fraud_signals" ("destination");');
    this.addSql('create index "fraud_signals_instrument_index" on "fraud_signals" ("instrument");');
    this.addSql('create index "fraud_signals_device_id_created_at_index" on "fraud_signals" ("device_id", "created_at");');
  }
}
