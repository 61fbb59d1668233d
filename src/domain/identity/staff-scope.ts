import type { EntityManager } from '@mikro-orm/postgresql';
import type { StaffDataScope } from '../../platform/caller';
import type { DataScopeName } from '../../entities/staff-user.entity';
import { executeNamed } from '../../db/bound-statement';
import { STAFF_DATA_SCOPE } from './identity.queries';

/**
 * The data scope of a staff user as of now (one statement). It is cached with the session's
 * or API token's permissions and refreshed with them (refreshLivePermissions) after a change
 * of the user's scope or of any team, so a change holds from the very next request, as a change
 * of permissions does. An unknown user sees nothing beyond what it manages.
 */
export async function staffDataScope(em: EntityManager, userId: string): Promise<StaffDataScope> {
  const [row] = await executeNamed<{ dataScope: DataScopeName; teamIds: string[] }>(
    em,
    STAFF_DATA_SCOPE.bind({ user_id: userId }),
  );
  if (row?.dataScope === 'all') return { kind: 'all' };
  return { kind: row?.dataScope === 'team' ? 'team' : 'own', userId, teamIds: row?.teamIds ?? [] };
}
