import { ExpirePendingOrdersJob } from '../jobs/expire-pending-orders.job';
import { expireDuePendingOrders } from '../domain/orders/pending-orders';
import { defineProcessor } from './processor';

export const expirePendingOrdersProcessor = defineProcessor(ExpirePendingOrdersJob, async (_payload, { em }) => ({
  expired: await expireDuePendingOrders(em),
}));
