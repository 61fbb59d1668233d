import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';

/** How many trading accounts trade under a group (a group in use cannot be deleted). */
export function countAccountsInGroup(em: EntityManager, groupId: string): Promise<number> {
  return em.count(Account, { group: groupId });
}
