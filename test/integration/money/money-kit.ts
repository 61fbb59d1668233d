import Decimal from 'decimal.js';
import type { LoggedIn } from '../../helpers/identity';
import { sql, type TestApp, type TestResponse } from '../../helpers/test-app';

export interface AccountState {
  login: number;
  kind: string;
  currency: string;
  balance: string;
  reserved: string;
}

/** The customer's wallet login, as the customer sees it. */
export async function walletOf(app: TestApp, customer: LoggedIn): Promise<number> {
  const res = await app.request('GET', '/customers/me/accounts', { token: customer.token });
  const wallet = (res.body.items as Array<{ login: number; kind: string }>).find((a) => a.kind === 'wallet');
  if (!wallet) throw new Error(`no wallet: ${res.text}`);
  return wallet.login;
}

/** Balance and reserve straight from the accounts table. */
export async function accountState(app: TestApp, login: number): Promise<AccountState> {
  const [row] = await sql<AccountState & { login: string }>(
    app,
    `select login::text as login, kind, currency, balance::text as balance, reserved::text as reserved from accounts where login = ?`,
    [login],
  );
  if (!row) throw new Error(`no account ${login}`);
  return { ...row, login: Number(row.login) };
}

export function transfer(
  app: TestApp,
  customer: LoggedIn,
  from: number | string,
  to: number | string,
  amount: unknown,
  key?: string,
): Promise<TestResponse> {
  return app.request('POST', '/customers/me/transfer', {
    token: customer.token,
    body: { from_login: from, to_login: to, amount },
    headers: key ? { 'idempotency-key': key } : {},
  });
}

export function withdraw(
  app: TestApp,
  customer: LoggedIn,
  amount: unknown,
  extra: { payment_data?: unknown; comment?: string; key?: string } = {},
): Promise<TestResponse> {
  const body: Record<string, unknown> = { amount, payment_data: extra.payment_data ?? { iban: 'DE89370400440532013000' } };
  if (extra.comment !== undefined) body.comment = extra.comment;
  return app.request('POST', '/customers/me/withdraw', {
    token: customer.token,
    body,
    headers: extra.key ? { 'idempotency-key': extra.key } : {},
  });
}

export function decide(
  app: TestApp,
  token: string,
  id: string,
  decision: 'approve' | 'reject',
  reason = 'Payment details do not match the account holder',
): Promise<TestResponse> {
  return app.request('POST', `/api/backoffice/withdrawals/${id}/${decision}`, {
    token,
    body: decision === 'reject' ? { reason } : undefined,
  });
}

/** Sum of decimal texts, exactly. */
export function sum(values: Array<string | number>): Decimal {
  return values.reduce<Decimal>((acc, v) => acc.plus(String(v)), new Decimal(0));
}

/** No balance of the database may be negative, and no wallet may reserve more than it holds. */
export async function expectNoOverdraft(app: TestApp): Promise<void> {
  const bad = await sql(
    app,
    `select login::text, kind, balance::text, reserved::text from accounts
      where balance < 0 or reserved < 0 or (kind = 'wallet' and reserved > balance)`,
  );
  if (bad.length) throw new Error(`overdrawn accounts: ${JSON.stringify(bad)}`);
}
