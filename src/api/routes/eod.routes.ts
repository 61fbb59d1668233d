import { z } from 'zod';
import { accessibleAccount } from '../../domain/accounts/accounts';
import { DailySnapshotSchema, dailySnapshotView } from '../../domain/eod/daily-snapshot';
import {
  eodRunAccepted,
  EodRunAcceptedSchema,
  EodRunSchema,
  eodRunView,
  readEodRun,
  refuseBeforeRollover,
  requestEodRun,
} from '../../domain/eod/eod-runs';
import { TradingDate } from '../../domain/eod/rollover';
import { AccountDailySnapshot } from '../../entities/account-daily-snapshot.entity';
import { EodRun } from '../../entities/eod-run.entity';
import { findPage } from '../../db/find-page';
import { readOnReplica } from '../../db/read-replica';
import type { EntityManager } from '@mikro-orm/postgresql';
import { asStaff } from '../http/access';
import { LoginText } from '../http/amounts';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { customerScopeOf } from '../../platform/customer-scope';

const DailyQuery = z.object({
  from: TradingDate.optional().describe('First trading date, inclusive'),
  to: TradingDate.optional().describe('Last trading date, inclusive'),
  ...pageQuery(),
});

/**
 * A page of an account's snapshots, read on the read replica once it has replayed every commit
 * up to the request (a run reported finished has every snapshot there).
 */
async function dailyPage(em: EntityManager, accountId: string, query: z.output<typeof DailyQuery>) {
  const tradingDate = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lte: query.to } : {}) };
  return readOnReplica(em, 'primary', (readEm) =>
    findPage(
      readEm,
      AccountDailySnapshot,
      { account: accountId, ...(query.from || query.to ? { tradingDate } : {}) },
      query,
      { orderBy: { tradingDate: 'asc' } },
      dailySnapshotView,
    ),
  );
}

const DAILY =
  'The daily snapshots the end of day wrote, oldest first: balance, equity, margin, free margin and floating profit ' +
  'at the rollover, and `movements`, the sums per ledger kind of the rows booked since the previous snapshot. ' +
  '`from` and `to` (YYYY-MM-DD) are inclusive.';

export const eodRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/backoffice/eod/runs',
    operationId: 'startEodRun',
    summary: 'Run the end of day of a trading date',
    description:
      'Books the swaps of every open order opened before the rollover of `trading_date` and writes every trading ' +
      "account's daily snapshot, in per-account jobs on the `eod` queue; then mails each customer with activity a daily " +
      'statement. A date whose rollover (`rollover_time` of `GET /api/admin/settings`, UTC, on that date) has not ' +
      'passed yet is 422 at `trading_date`: a run before it would snapshot the day before it ends. Answers 202 with the run id. While a run of the same ' +
      'date is queued or running, the answer is that run (202, the same id): no second run starts. A date already run ' +
      'may run again; it books nothing twice (at most one swap per order and date, one snapshot per account and date).',
    tags: ['end of day'],
    access: { kind: 'staff', permission: 'run_end_of_day' },
    body: z.object({ trading_date: TradingDate }),
    responses: { 202: { description: 'Queued, or the run of the date in progress', schema: EodRunAcceptedSchema } },
    handler: async ({ body, em, services, caller }) => {
      await refuseBeforeRollover(em, body.trading_date);
      const { runId } = await requestEodRun(em, services.jobs, body.trading_date, asStaff(caller).userId);
      return json(202, eodRunAccepted(runId));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/eod/runs/{run_id}',
    operationId: 'getEodRun',
    summary: 'An end-of-day run and its progress',
    tags: ['end of day'],
    access: { kind: 'staff', permission: 'run_end_of_day' },
    params: z.object({ run_id: z.uuid() }),
    responses: { 200: { description: 'The run', schema: EodRunSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, await eodRunView(em, await readEodRun(em, params.run_id))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/eod/runs',
    operationId: 'listEodRuns',
    summary: 'End-of-day runs, newest first',
    tags: ['end of day'],
    access: { kind: 'staff', permission: 'run_end_of_day' },
    query: z.object({ trading_date: TradingDate.optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of runs', schema: pageSchema(EodRunSchema) } },
    handler: async ({ query, em }) => {
      const page = await findPage(
        em,
        EodRun,
        query.trading_date ? { tradingDate: query.trading_date } : {},
        query,
        { orderBy: { createdAt: 'desc', id: 'asc' } },
        (run) => run,
      );
      return json(200, { ...page, items: await Promise.all(page.items.map((run) => eodRunView(em, run))) });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/accounts/{login}/daily',
    operationId: 'listAccountDaily',
    summary: "An account's daily snapshots",
    description: DAILY,
    tags: ['end of day'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: z.object({ login: LoginText }),
    query: DailyQuery,
    responses: {
      200: { description: 'A page of snapshots', schema: pageSchema(DailySnapshotSchema) },
      404: { description: 'No such account' },
    },
    handler: async ({ params, query, em, caller }) => {
      const account = await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(200, await dailyPage(em, account.id, query));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/accounts/{login}/daily',
    operationId: 'listMyAccountDaily',
    summary: "One of the calling customer's accounts: its daily snapshots",
    description: `${DAILY} Another customer's account is 404.`,
    tags: ['end of day'],
    access: { kind: 'customer' },
    params: z.object({ login: LoginText }),
    query: DailyQuery,
    responses: {
      200: { description: 'A page of snapshots', schema: pageSchema(DailySnapshotSchema) },
      404: { description: 'No such account' },
    },
    handler: async ({ params, query, em, caller }) => {
      const account = await accessibleAccount(em, params.login, customerScopeOf(caller));
      return json(200, await dailyPage(em, account.id, query));
    },
  }),
];
