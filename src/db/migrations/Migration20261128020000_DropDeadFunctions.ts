import { Migration } from '@mikro-orm/migrations';
import { SEQUENCE_IN_BODY_STEP } from './Migration20261127050000_LooseEnds';

/**
 * `webhook_delivery_step`, the one-delivery-at-a-time step, has had no caller since
 * `webhook_delivery_steps` replaced it; a function nothing calls is still code someone must
 * read and keep right, so it goes.
 */
export class Migration20261128020000_DropDeadFunctions extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'drop function if exists webhook_delivery_step(uuid, integer, uuid, boolean, uuid, uuid, timestamptz, integer, integer, text, boolean);',
    );
  }

  override async down(): Promise<void> {
    this.addSql(SEQUENCE_IN_BODY_STEP);
  }
}
