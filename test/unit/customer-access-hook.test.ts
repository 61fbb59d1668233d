import type { RunBound } from '../../src/db/bound-transaction';
import { CustomerAccessHook } from '../../src/domain/fraud/hooks';
import type { PostedAccount, Posting } from '../../src/domain/ledger/posting';
import type { Statement } from '../../src/platform/named-sql';

const account: PostedAccount = {
  id: 'a',
  login: '1',
  customerId: 'c',
  kind: 'live',
  currency: 'USD',
  balance: '100.00',
  credit: '0.00',
  reserved: '0.00',
};

const posting = (customer: PostedAccount['customer']): Posting => ({
  flow: 'order_open',
  account: customer === undefined ? account : { ...account, customer },
  amount: '0.00',
  reference: { type: 'order', id: 'o' },
});

/** A run that answers `access` for the customer read, and records what it was sent. */
function runAnswering(access: string | undefined): { run: RunBound; sent: Statement[] } {
  const sent: Statement[] = [];
  const run = async <T>(statement: Statement): Promise<T[]> => {
    sent.push(statement);
    return (access === undefined ? [] : [{ access }]) as T[];
  };
  return { run, sent };
}

test('when the locking statement read the customer, then the hook decides on it and reads nothing', async () => {
  const full = runAnswering('close_only');
  await CustomerAccessHook.before!(full.run, posting({ access: 'full', email: 'x@broker.test', country: null }));
  expect(full.sent).toEqual([]);

  const restricted = runAnswering('full');
  await expect(
    CustomerAccessHook.before!(restricted.run, posting({ access: 'close_only', email: 'x@broker.test', country: 'DE' })),
  ).rejects.toMatchObject({ status: 403, code: 'ACCESS_RESTRICTED' });
  expect(restricted.sent).toEqual([]);
});

test('when the path read no customer, then the hook reads its access itself', async () => {
  const restricted = runAnswering('close_only');
  await expect(CustomerAccessHook.before!(restricted.run, posting(undefined))).rejects.toMatchObject({
    code: 'ACCESS_RESTRICTED',
  });
  expect(restricted.sent).toHaveLength(1);

  const full = runAnswering('full');
  await CustomerAccessHook.before!(full.run, posting(undefined));
  expect(full.sent).toHaveLength(1);
});

test('when the account has no customer, then nothing is refused or read', async () => {
  const none = runAnswering('close_only');
  await CustomerAccessHook.before!(none.run, posting(null));
  await CustomerAccessHook.before!(none.run, { ...posting(undefined), account: { ...account, customerId: null } });
  expect(none.sent).toEqual([]);
});
