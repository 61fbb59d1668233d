import {
  afterPosting,
  beforePosting,
  hasPostingHooks,
  installPostingHooks,
  postingStatementParts,
  type Posting,
  type PostingHook,
} from '../../src/domain/ledger/posting';
import { closeStatement, guardedCloseStatement, type CloseParams } from '../../src/domain/orders/close-statements';

const closeParams: CloseParams = {
  ticket: '42',
  closed_at: new Date(0),
  close_price: '1.1',
  profit: '-3.50',
  commission: '-0.70',
  reason: 'manual',
  event: '{"order":42}',
  bulk_close_run_id: null,
};

const posting = (flow: Posting['flow']): Posting => ({
  flow,
  account: {
    id: 'a',
    login: '1',
    customerId: 'c',
    kind: 'wallet',
    currency: 'USD',
    balance: '0.00',
    credit: '0.00',
    reserved: '0.00',
  },
  amount: '-1.00',
  reference: { type: 'test', id: '1' },
});

afterEach(() => installPostingHooks([]));

test('when hooks are installed, then each phase runs the hooks of its flow in their order, and no others', async () => {
  const ran: string[] = [];
  const hook = (name: string, flows: PostingHook['flows']): PostingHook => ({
    name,
    flows,
    before: async () => void ran.push(`before ${name}`),
    after: async () => void ran.push(`after ${name}`),
  });
  installPostingHooks([hook('first', ['withdrawal', 'deposit']), hook('second', ['withdrawal']), hook('other', ['order_close'])]);
  const run = async <T>(): Promise<T[]> => [];
  await beforePosting(run, posting('withdrawal'));
  await afterPosting(run, posting('withdrawal'));
  await beforePosting(run, posting('transfer_in'));
  expect(ran).toEqual(['before first', 'before second', 'after first', 'after second']);
  expect(hasPostingHooks('before', 'order_close')).toBe(true);
  expect(hasPostingHooks('before', 'transfer_in')).toBe(false);
});

test('when a hook has no after phase, then the after phase of its flow counts as having none', () => {
  installPostingHooks([{ name: 'refuser', flows: ['payout'], before: async () => undefined }]);
  expect(hasPostingHooks('before', 'payout')).toBe(true);
  expect(hasPostingHooks('after', 'payout')).toBe(false);
});

test('when two hooks share a name, then installing them fails', () => {
  const hook: PostingHook = { name: 'twice', flows: ['deposit'], before: async () => undefined };
  expect(() => installPostingHooks([hook, hook])).toThrow(/twice/);
});

test('when a hook has a statement part, then only a flow that books in one statement takes it, and the close folds it in', () => {
  const part = {
    ctes: 'probe_cte as (select 1 as n from o)',
    answer: 'select count(*) from probe_cte',
    applies: (account: { credit: string }) => account.credit !== '0.00',
  };
  expect(() => installPostingHooks([{ name: 'stray', flows: ['order_close', 'deposit'], statementPart: part }])).toThrow(
    /statement part/,
  );
  expect(() => installPostingHooks([{ name: 'Bad-Name', flows: ['order_close'], statementPart: part }])).toThrow(/a-z/);

  installPostingHooks([{ name: 'probe', flows: ['order_close'], statementPart: part }]);
  expect(postingStatementParts('order_close')).toEqual([{ hook: 'probe', ...part }]);
  const { sql, values } = closeStatement(closeParams);
  expect(sql).toContain(`,\n${part.ctes}`);
  expect(sql).toContain(`json_build_object('probe', (${part.answer})) as answers`);
  expect(sql.match(/\?/g)).toHaveLength(values.length);
  // The account as the caller read it decides which parts are in; without it, all are.
  expect(closeStatement(closeParams, { credit: '5.00' }).sql).toContain('probe_cte');
  expect(closeStatement(closeParams, { credit: '0.00' }).sql).not.toContain('probe');
  expect(closeStatement(closeParams, { credit: '0.00' }).sql).toContain('null::json as answers');

  installPostingHooks([]);
  expect(closeStatement(closeParams).sql).not.toContain('probe');
});

test('when an after hook of closes declares no idle guard, then no close skips the transaction; with guards, the close is guarded by every one', () => {
  const after = async () => undefined;
  const guarded: PostingHook = {
    name: 'guarded',
    flows: ['order_close'],
    idleWhen: { sql: 'a.credit <= 0', likely: (account) => account.credit === '0.00' },
    after,
  };
  const unguarded: PostingHook = { name: 'unguarded', flows: ['order_close'], after };
  expect(() => installPostingHooks([{ ...guarded, flows: ['order_close', 'deposit'] }])).toThrow(/idle guard/);

  installPostingHooks([guarded, unguarded]);
  expect(guardedCloseStatement(closeParams)).toBeNull();
  expect(guardedCloseStatement(closeParams, { credit: '0.00' })).toBeNull();

  // A hook with no after phase needs no guard: nothing runs after the close for it.
  installPostingHooks([guarded, { name: 'refuser', flows: ['order_close'], before: async () => undefined }]);
  const { sql, values } = guardedCloseStatement(closeParams, { credit: '0.00' })!;
  expect(sql).toContain('and (a.credit <= 0)');
  expect(sql).toMatch(/for update of a/);
  expect(sql).toContain('as held');
  expect(sql.match(/\?/g)).toHaveLength(values.length);
  // The account as read says the hook has work: straight to the transaction.
  expect(guardedCloseStatement(closeParams, { credit: '5.00' })).toBeNull();
  // A bulk close's guarded statement leaves its item alone when it is held.
  expect(guardedCloseStatement({ ...closeParams, bulk_close_run_id: 'run' })!.sql).toMatch(
    /status = 'pending'\s+and not \(exists/,
  );
  // The unguarded statement answers held false.
  expect(closeStatement(closeParams).sql).toContain('false as held');
});

test('when a guard rides with its part, then the guarded statement keeps the part and closes only while the guard holds over its before CTEs', () => {
  const part = {
    before: 'ride_before as (select 1 as wanted from la)',
    ctes: 'ride_after as (select 1 from o)',
    answer: 'select count(*) from ride_after',
    applies: (account: { credit: string }) => account.credit !== '0.00',
  };
  installPostingHooks([
    {
      name: 'ride',
      flows: ['order_close'],
      statementPart: part,
      idleWhen: { sql: 'a.credit <= 0', withPart: 'not exists (select 1 from ride_before)' },
      after: async () => undefined,
    },
  ]);
  const { sql, values } = guardedCloseStatement(closeParams, { credit: '5.00' })!;
  expect(sql.match(/\?/g)).toHaveLength(values.length);
  // The part is in, its before CTEs ahead of the close, which waits for the guard over them.
  expect(sql.indexOf(part.before)).toBeLessThan(sql.search(/[\s,]o as \(/));
  expect(sql).toContain(part.ctes);
  expect(sql).toContain('exists (select 1 from la) and (not exists (select 1 from ride_before))');
  expect(sql).not.toContain('and (a.credit <= 0)');
  // The part left out (no credit as read): the guard stands alone on the locked account.
  const alone = guardedCloseStatement(closeParams, { credit: '0.00' })!.sql;
  expect(alone).toContain('and (a.credit <= 0)');
  expect(alone).not.toContain('ride_');
  // The transaction's statement runs the before CTEs too, after the order's and the account's locks.
  const unguarded = closeStatement(closeParams, { credit: '5.00' }).sql;
  expect(unguarded).toContain(part.before);
  expect(unguarded).toMatch(/for update of a/);
  expect(unguarded).toContain('false as held');
});

test('when a guard rides with a part that runs nothing before the booking, then installing it fails', () => {
  const part = { ctes: 'x_cte as (select 1)', answer: 'select 1', applies: () => true };
  expect(() =>
    installPostingHooks([
      {
        name: 'x',
        flows: ['order_close'],
        statementPart: part,
        idleWhen: { sql: 'true', withPart: 'true' },
        after: async () => undefined,
      },
    ]),
  ).toThrow(/before/);
});
