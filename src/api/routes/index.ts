import type { RouteSpec } from '../http/route';
import { accountRoutes } from './accounts.routes';
import { adminRoutes } from './admin.routes';
import { authRoutes } from './auth.routes';
import { crmRoutes } from './crm.routes';
import { groupRoutes } from './groups.routes';
import { instrumentRoutes } from './instruments.routes';
import { moneyRoutes } from './money.routes';
import { orderRoutes } from './orders.routes';
import { propRoutes } from './prop.routes';
import { queueRoutes } from './queues.routes';
import { riskRoutes } from './risk.routes';
import { simulatorRoutes } from './simulator.routes';
import { systemRoutes } from './system.routes';

/** The application's route table: what is mounted, documented and access-checked. */
export const ROUTES: RouteSpec[] = [
  ...systemRoutes,
  ...authRoutes,
  ...adminRoutes,
  ...crmRoutes,
  ...groupRoutes,
  ...instrumentRoutes,
  ...simulatorRoutes,
  ...accountRoutes,
  ...moneyRoutes,
  ...orderRoutes,
  ...propRoutes,
  ...riskRoutes,
  ...queueRoutes,
];
