import { z } from 'zod';
import {
  readRiskRun,
  riskPreviewAccepted,
  RiskPreviewResultSchema,
  riskRunView,
  RiskRunAcceptedSchema,
  startRiskPreview,
} from '../../domain/risk/preview';
import { RiskRuleInputSchema } from '../../domain/risk/rule-input';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { runAndReply } from '../http/run-reply';

const CLASSIFY =
  'Classifies every trading account (wallets are not) over the closed orders of the last `rolling_window_days`: ' +
  'fewer than `min_trades_to_classify` of them is `unclassified`; otherwise `toxic` if the account meets every threshold ' +
  'in `toxic`, else `watchlist` if it meets every threshold in `watchlist`, else `normal`. Thresholds (at least one per ' +
  'class): `max_avg_hold_seconds` (average open-to-close time), `min_win_rate` (0 to 1: share of orders closed with a ' +
  'profit), `min_profit_factor` (gross profit / gross loss; no loss at all is unbounded), `min_trades_per_day` ' +
  '(closed orders / rolling_window_days). `conditions` narrows the accounts (`group_ids`, `kinds`) and the orders ' +
  '(`symbols`) considered; `actions` maps a class to `move_to_group_id` (an active group), `notify`, ' +
  '`disable_trading`. A value out of bounds is 422 at its exact path, e.g. `["body", "toxic", "min_win_rate"]`.';

export const riskRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/risk/rules/preview',
    operationId: 'previewRiskRule',
    summary: 'Dry-run a risk rule: accounts per class (endpoint 11)',
    description:
      `${CLASSIFY}\n\n` +
      'The classification runs in a worker (queue `risk`) as one aggregate query over the closed orders; the request ' +
      'records a run (its input and window, fixed now) and waits for it up to RISK_PREVIEW_WAIT_MS (30 s), then answers ' +
      '202 with the run id, and `GET /risk/previews/{run_id}` gives the result. Deterministic, and nothing is written ' +
      'but the run record: `actions` are validated, never executed.',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'preview_risk_rules' },
    body: RiskRuleInputSchema,
    responses: {
      200: { description: 'Classified', schema: RiskPreviewResultSchema },
      202: { description: 'Still running', schema: RiskRunAcceptedSchema },
    },
    handler: ({ body, em, services, caller }) =>
      runAndReply(startRiskPreview(em, services.jobs, body, asStaff(caller).userId), {
        queueEvents: services.queueEvents,
        waitMs: services.config.riskPreviewWaitMs,
        read: async (runId) => riskRunView(await readRiskRun(em, runId, 'preview')),
        isDone: (run) => run.status === 'completed',
        accepted: riskPreviewAccepted,
      }),
  }),
  defineRoute({
    method: 'get',
    path: '/risk/previews/{run_id}',
    operationId: 'getRiskPreview',
    summary: 'The result of a risk rule preview, as far as it has got',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'preview_risk_rules' },
    params: z.object({ run_id: z.uuid() }),
    responses: { 200: { description: 'The run', schema: RiskPreviewResultSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, riskRunView(await readRiskRun(em, params.run_id, 'preview'))),
  }),
];
