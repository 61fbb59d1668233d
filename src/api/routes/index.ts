import type { RouteSpec } from '../http/route';
import { systemRoutes } from './system.routes';

/** The application's route table: what is mounted, documented and access-checked. */
export const ROUTES: RouteSpec[] = [...systemRoutes];
