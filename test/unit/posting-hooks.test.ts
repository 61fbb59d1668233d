import {
  afterPosting,
  beforePosting,
  hasPostingHooks,
  installPostingHooks,
  type Posting,
  type PostingHook,
} from '../../src/domain/ledger/posting';

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
