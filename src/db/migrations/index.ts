import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122185420 } from './Migration20261122185420';

/** Every committed migration, oldest first. `npm run migration:create` writes new ones; add them here. */
export const MIGRATIONS: MigrationObject[] = [{ name: 'Migration20261122185420', class: Migration20261122185420 }];
