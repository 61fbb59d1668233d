import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { RunBound } from '../../db/bound-transaction';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { Customer } from '../../entities/customer.entity';
import { FRAUD_CASE_STATUSES, FraudCase } from '../../entities/fraud.entity';
import { Account } from '../../entities/account.entity';
import { Withdrawal } from '../../entities/withdrawal.entity';
import type { StaffCaller } from '../../platform/caller';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { eventInsertSql, recordEvent } from '../events/outbox';
import { LOCK_CUSTOMER, LOCK_CUSTOMER_ACCOUNTS } from './fraud.queries';

export const CASE_ACTIONS = ['block_customer', 'forfeit_bonuses', 'clawback_ib', 'disable_trading', 'release_holds'] as const;
export type CaseAction = (typeof CASE_ACTIONS)[number];

/**
 * What a resolution action does beyond the built-in ones: the bonus and partner features
 * register `forfeit_bonuses` and `clawback_ib` here at start-up. A handler runs in the
 * resolution's transaction, so its writes commit or roll back with the verdict. Without a
 * handler the action is recorded on the case and does nothing else.
 */
export type CaseActionHandler = (tx: EntityManager, fraudCase: FraudCase, actor: StaffCaller) => Promise<void>;
const extensions = new Map<CaseAction, CaseActionHandler>();

export function registerCaseAction(action: 'forfeit_bonuses' | 'clawback_ib', handler: CaseActionHandler): void {
  extensions.set(action, handler);
}

/**
 * What happens to what a review held (a bonus or a promo redemption `on_hold`) when the case
 * resolves: `release` (the resolution lists `release_holds`: grant it now) or `void` (a `fraud`
 * verdict without `release_holds`: it never takes effect). A `legitimate` verdict without
 * `release_holds` leaves the holds as they are. Features that hold register here at start-up;
 * a handler runs in the resolution's transaction, with the customer's accounts already locked.
 */
export type HoldOutcome = 'release' | 'void';
export type HoldHandler = (tx: EntityManager, fraudCase: FraudCase, outcome: HoldOutcome, actor: StaffCaller) => Promise<void>;
const holdHandlers = new Map<string, HoldHandler>();

export function registerHoldHandler(name: string, handler: HoldHandler): void {
  holdHandlers.set(name, handler);
}

export const CaseReferenceSchema = z.object({ type: z.string(), id: z.string() });

/** Why a case was opened or extended: one entry per evaluation that sent the customer to review. */
export const CaseReasonSchema = z.object({
  at: z.iso.datetime(),
  event: z.string(),
  reason: z.string(),
  evaluation_id: z.uuid().nullable(),
  reference: CaseReferenceSchema.nullable(),
});

export const FraudCaseSchema = z.object({
  id: z.uuid(),
  customer_id: z.uuid(),
  status: z.enum(FRAUD_CASE_STATUSES),
  assignee_id: z.uuid().nullable(),
  reasons: z.array(CaseReasonSchema),
  verdict: z.enum(['fraud', 'legitimate']).nullable(),
  actions: z.array(z.enum(CASE_ACTIONS)).nullable(),
  note: z.string().nullable(),
  resolved_at: z.iso.datetime().nullable(),
  resolved_by: z.uuid().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type FraudCaseView = z.output<typeof FraudCaseSchema>;

export function fraudCaseView(c: FraudCase): FraudCaseView {
  return {
    id: c.id,
    customer_id: c.customerId,
    status: c.status,
    assignee_id: c.assigneeId ?? null,
    reasons: c.reasons,
    verdict: (c.verdict as FraudCaseView['verdict']) ?? null,
    actions: (c.actions as CaseAction[] | null) ?? null,
    note: c.note ?? null,
    resolved_at: c.resolvedAt?.toISOString() ?? null,
    resolved_by: c.resolvedBy ?? null,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

/**
 * Adds a reason to the customer's case still open (or under investigation), or opens one with
 * `fraud.case_opened`: one customer has one live case, which gathers every hold until staff
 * resolve it. Locks the customer row so two holds at once cannot open two cases.
 */
export async function openOrExtendCase(
  run: RunBound,
  customerId: string,
  why: { event: string; reason: string; evaluationId: string | null; reference: { type: string; id: string } | null },
): Promise<string> {
  await run({ sql: 'select 1 from customers where id = ? for update', values: [customerId] });
  const reason = JSON.stringify([
    {
      at: new Date().toISOString(),
      event: why.event,
      reason: why.reason,
      evaluation_id: why.evaluationId,
      reference: why.reference,
    },
  ]);
  const [live] = await run<{ id: string }>({
    sql: `update fraud_cases set reasons = reasons || ?::jsonb, updated_at = now()
           where id = (select id from fraud_cases where customer_id = ? and status in ('open', 'investigating') order by created_at limit 1)
          returning id`,
    values: [reason, customerId],
  });
  if (live) return live.id;
  const [opened] = await run<{ id: string; data: string }>({
    sql: `insert into fraud_cases (id, created_at, updated_at, customer_id, status, reasons)
          values (gen_random_uuid(), now(), now(), ?, 'open', ?::jsonb)
          returning id, json_build_object('id', id, 'customer_id', customer_id, 'status', status, 'event', ?::text)::text as data`,
    values: [customerId, reason, why.event],
  });
  await run({
    sql: eventInsertSql({
      type: 'fraud.case_opened',
      aggregateType: 'fraud_case',
      aggregateId: '?::text',
      // Staff only: an event naming the customer would reach the customer's own stream and tell it it is watched.
      customerId: 'null::uuid',
      data: '?::jsonb',
      at: 'now()',
    }),
    values: [opened!.id, opened!.data],
  });
  return opened!.id;
}

/** The same, for ORM transactions. */
export function openCaseIn(tx: EntityManager, customerId: string, why: Parameters<typeof openOrExtendCase>[2]): Promise<string> {
  return openOrExtendCase((statement) => executeBoundInTransaction(tx, statement), customerId, why);
}

export const CaseListQuerySchema = z.object({
  status: z.enum(FRAUD_CASE_STATUSES).optional(),
  assignee: z
    .union([z.literal('me'), z.literal('unassigned'), z.uuid()])
    .optional()
    .describe('`me`, `unassigned` or a staff user id'),
});

export const CasePatchSchema = z.object({
  status: z.enum(['open', 'investigating', 'discarded']).optional().describe('open ⇄ investigating, or discarded (terminal)'),
  assignee_id: z.uuid().nullable().optional(),
});

export const ResolveCaseSchema = z.object({
  verdict: z.enum(['fraud', 'legitimate']),
  actions: z.array(z.enum(CASE_ACTIONS)).max(CASE_ACTIONS.length).default([]),
  note: z.string().trim().min(1).max(2000),
});

const LIVE = new Set(['open', 'investigating']);

export async function updateCase(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  patch: z.output<typeof CasePatchSchema>,
): Promise<FraudCase> {
  return em.transactional(async (tx) => {
    const c = await tx.findOne(FraudCase, id, { lockMode: 4 });
    if (!c) throw errors.notFound('Case');
    if (!LIVE.has(c.status)) throw errors.conflict('CASE_CLOSED', `This case is already ${c.status}`);
    const before = fraudCaseView(c);
    if (patch.status) c.status = patch.status;
    if (patch.assignee_id !== undefined) c.assigneeId = patch.assignee_id;
    c.updatedAt = new Date();
    recordAudit(tx, actor, {
      action: 'fraud_case.updated',
      entityType: 'fraud_case',
      entityId: id,
      before,
      after: fraudCaseView(c),
    });
    return c;
  });
}

/**
 * Resolves a live case and applies its actions, all in one transaction: a failure of any
 * action leaves the case and the customer as they were. Answers the customer whose sessions
 * must end (block_customer), which the caller revokes once this commits.
 */
export async function resolveCase(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  input: z.output<typeof ResolveCaseSchema>,
): Promise<{ fraudCase: FraudCase; revokeSessionsOf: string | null }> {
  return em.transactional(async (tx) => {
    const peek = await tx.findOne(FraudCase, id);
    if (!peek) throw errors.notFound('Case');
    // The order every path that holds or releases takes its locks in: the customer's accounts
    // (by id, as transfers lock them), then the customer, then the case. A withdrawal or a
    // deposit bonus held for review locks its account, then the customer and the case; the
    // resolution, which grants and forfeits on those accounts, must not take them the other way.
    await executeBoundInTransaction(tx, LOCK_CUSTOMER_ACCOUNTS.bind({ customer_id: peek.customerId }));
    await executeBoundInTransaction(tx, LOCK_CUSTOMER.bind({ customer_id: peek.customerId }));
    const c = await tx.findOne(FraudCase, id, { lockMode: 4, refresh: true });
    if (!c) throw errors.notFound('Case');
    if (!LIVE.has(c.status)) throw errors.conflict('CASE_CLOSED', `This case is already ${c.status}`);
    const before = fraudCaseView(c);
    const actions = [...new Set(input.actions)];
    // Forfeiting runs before releasing, whatever order they were sent in: "forfeit and release"
    // releases the withdrawals and forfeits the bonuses, never grants a bonus to forfeit it.
    const ordered = CASE_ACTIONS.filter((a) => actions.includes(a));
    let revokeSessionsOf: string | null = null;
    for (const action of ordered) {
      if (action === 'block_customer') {
        const customer = await tx.findOneOrFail(Customer, c.customerId);
        if (customer.access !== 'no_login') {
          const from = customer.access;
          customer.access = 'no_login';
          customer.updatedAt = new Date();
          recordAudit(tx, actor, {
            action: 'customer.access_changed',
            entityType: 'customer',
            entityId: customer.id,
            before: { access: from },
            after: { access: 'no_login' },
          });
          recordEvent(tx, {
            type: 'customer.access_changed',
            aggregateType: 'customer',
            aggregateId: customer.id,
            customerId: customer.id,
            data: { customer_id: customer.id, from, to: 'no_login' },
          });
        }
        revokeSessionsOf = customer.id;
      } else if (action === 'disable_trading') {
        await tx.nativeUpdate(
          Account,
          { customer: c.customerId, kind: { $in: ['live', 'demo', 'prop'] } },
          { tradingDisabled: true },
        );
      } else if (action === 'release_holds') {
        await tx.nativeUpdate(
          Withdrawal,
          { customer: c.customerId, status: 'pending', reviewReason: { $ne: null } },
          { reviewReason: null },
        );
        for (const handler of holdHandlers.values()) await handler(tx, c, 'release', actor);
      } else {
        const handler = extensions.get(action);
        if (handler) await handler(tx, c, actor);
      }
    }
    if (input.verdict === 'fraud' && !actions.includes('release_holds'))
      for (const handler of holdHandlers.values()) await handler(tx, c, 'void', actor);
    c.status = 'resolved';
    c.verdict = input.verdict;
    c.actions = actions;
    c.note = input.note;
    c.resolvedAt = new Date();
    c.resolvedBy = actor.userId;
    c.updatedAt = new Date();
    const after = fraudCaseView(c);
    recordAudit(tx, actor, { action: 'fraud_case.resolved', entityType: 'fraud_case', entityId: id, before, after });
    recordEvent(tx, {
      type: 'fraud.case_resolved',
      aggregateType: 'fraud_case',
      aggregateId: id,
      // Staff only, as fraud.case_opened: the customer id travels in the data, not as the event's customer.
      customerId: null,
      data: { id, customer_id: c.customerId, verdict: input.verdict, actions },
    });
    return { fraudCase: c, revokeSessionsOf };
  });
}
