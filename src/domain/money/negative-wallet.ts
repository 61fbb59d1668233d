import { dec } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import type { PostingHook } from '../ledger/posting';

/**
 * A wallet below zero (a charge-back or refund booked after the money was spent) holds a
 * debt to the broker: nothing leaves it, by withdrawal or by transfer, until deposits or
 * transfers in bring it back to zero. Money may still come in, and trading accounts keep
 * their own balances. Reads only the locked row, so it costs nothing when the wallet is not
 * negative.
 */
export const NegativeWalletHook: PostingHook = {
  name: 'negative_wallet',
  flows: ['withdrawal', 'transfer_out'],
  async before(_run, { account }) {
    if (account.kind === 'wallet' && dec(account.balance).lt(0))
      throw errors.conflict(
        'ACCOUNT_NEGATIVE',
        `The wallet's balance is ${account.balance} ${account.currency}: nothing can leave it until it is back to zero`,
      );
  },
};
