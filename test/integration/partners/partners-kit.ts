import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { boundTransaction } from '../../../src/db/bound-transaction';
import { accrueClose } from '../../../src/domain/partners/accrual';
import { openCaseIn } from '../../../src/domain/fraud/cases';
import { createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, type TestApp } from '../../helpers/test-app';
import { expectOk } from '../trading/trading-kit';

export interface PartnerOf {
  id: string;
  code: string;
  customer: LoggedIn;
}

/** A plan: a 50/30/20 % commission share paid daily unless terms say otherwise. */
export async function plan(app: TestApp, token: string, terms: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/api/crm/ib-plans', {
    token,
    body: {
      name: `Plan ${randomBytes(3).toString('hex')}`,
      currency: 'USD',
      basis: 'commission_pct',
      levels: [
        { level: 1, value: 50 },
        { level: 2, value: 30 },
        { level: 3, value: 20 },
      ],
      charge: 'daily',
      ...terms,
    },
  });
  return expectOk(res, 201, 'plan').id as string;
}

/** A new customer made a partner under `parent`. */
export async function partner(app: TestApp, token: string, planId: string, parent?: PartnerOf): Promise<PartnerOf> {
  const customer = await createCustomer(app, token);
  const res = await app.request('POST', '/api/crm/partners', {
    token,
    body: { customer_id: customer.id, plan_id: planId, ...(parent ? { parent_partner_id: parent.id } : {}) },
  });
  const body = expectOk(res, 201, 'partner');
  return { id: body.id, code: body.code, customer };
}

export async function attribute(app: TestApp, token: string, customerId: string, partnerId: string | null, reason?: string) {
  return app.request('PATCH', `/api/crm/customers/${customerId}`, {
    token,
    body: { partner_id: partnerId, ...(reason ? { reason } : {}) },
  });
}

export interface AccrualRow {
  partner_id: string;
  level: number;
  amount: string;
  status: string;
  reason: string | null;
}

export async function accrualsOf(app: TestApp, ticket: number): Promise<AccrualRow[]> {
  return sql<AccrualRow>(
    app,
    `select partner_id::text as partner_id, level, amount::text as amount, status, reason from ib_accruals where ticket = ? order by level`,
    [ticket],
  );
}

/** The ib_reward and ib_reward_reversal rows of a customer's wallet, in booking order. */
export async function rewardRows(app: TestApp, customerId: string): Promise<Array<{ kind: string; amount: string }>> {
  return sql(
    app,
    `select l.kind, l.amount::text as amount from ledger_entries l join accounts a on a.id = l.account_id
      where a.customer_id = ? and a.kind = 'wallet' and l.kind in ('ib_reward', 'ib_reward_reversal') order by l.seq`,
    [customerId],
  );
}

/** Opens `volume` lots of EURUSD, dates the open `heldSeconds` back, closes it; answers the ticket. */
export async function roundTurn(app: TestApp, token: string, login: number, volume: number, heldSeconds = 120): Promise<number> {
  const ticket = expectOk(
    await app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume } }),
    201,
    'open',
  ).order as number;
  await sql(app, `update orders set created_at = now() - make_interval(secs => ?) where ticket = ?`, [heldSeconds, ticket]);
  expectOk(await app.request('POST', `/orders/${ticket}/close`, { token }), 200, 'close');
  return ticket;
}

/** The close's accrual run once more, as a retried close's hook would: it must add nothing. */
export async function accrueAgain(app: TestApp, ticket: number): Promise<void> {
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  await boundTransaction(em, (run) => accrueClose(run, String(ticket)));
}

/** Opens a fraud case about a customer, as a review verdict would. */
export async function openCase(app: TestApp, customerId: string): Promise<string> {
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  return em.transactional((tx) =>
    openCaseIn(tx, customerId, { event: 'ib_accrual', reason: 'Held for a fraud review', evaluationId: null, reference: null }),
  );
}
