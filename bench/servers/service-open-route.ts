import type { EntityManager } from '@mikro-orm/postgresql';
import type { RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { ADMIN_ROLE } from '../../src/domain/identity/permissions';
import { normalizeEmail } from '../../src/domain/identity/principals';
import { createStaffUser } from '../../src/domain/identity/staff';
import { Role } from '../../src/entities/role.entity';
import { StaffUser } from '../../src/entities/staff-user.entity';
import { startRuntime } from '../../src/runtime';
import { announce, fail } from './announce';
import { benchConfig } from './bench-config';

/**
 * The real service as in servers/service.ts, plus one extra route: GET /bench/settings, a
 * clone of GET /api/admin/settings (same handler, same pipeline) that is public. It lives
 * outside every path family, since the family check rightly refuses a public route under
 * /api/admin. Comparing the two on this one process isolates what authentication costs.
 *
 * BENCH_ADMIN_EMAIL and BENCH_ADMIN_PASSWORD name a staff user with the admin role, made
 * here if missing: the bootstrap admin alone is not enough, because it is created only in
 * a database without staff users, and the bench database may already hold some.
 */
/** auth.bench.ts requests this path (an entry file cannot be imported: it would start). */
const OPEN_SETTINGS_PATH = '/bench/settings';

async function main(): Promise<void> {
  const email = required('BENCH_ADMIN_EMAIL');
  const password = required('BENCH_ADMIN_PASSWORD');
  const config = benchConfig('api', { BOOTSTRAP_ADMIN_EMAIL: email, BOOTSTRAP_ADMIN_PASSWORD: password });

  const settings = ROUTES.find((r) => r.method === 'get' && r.path === '/api/admin/settings');
  if (!settings) throw new Error('GET /api/admin/settings is not in the route table');
  const open: RouteSpec = { ...settings, path: OPEN_SETTINGS_PATH, operationId: 'benchOpenSettings', access: { kind: 'public' } };

  const runtime = await startRuntime(config, { defaultMetrics: true, routes: [...ROUTES, open] });
  if (runtime.port === undefined) throw new Error('ROLE=api should have bound a port');
  await ensureAdmin(runtime.services.orm.em.fork() as EntityManager, email, password);
  announce(runtime.port, () => runtime.stop());
}

async function ensureAdmin(em: EntityManager, email: string, password: string): Promise<void> {
  if (await em.findOne(StaffUser, { email: normalizeEmail(email) })) return;
  const role = await em.findOneOrFail(Role, { name: ADMIN_ROLE });
  await createStaffUser(em, 'system', { email, password, full_name: 'Bench admin', role_ids: [role.id] });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().catch(fail);
