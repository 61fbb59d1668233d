import { namedStatement } from '../../platform/named-sql';

/**
 * The account statements written by hand, with named parameters. The margin call flag has one
 * writer: the engine's margin check raises and lowers it, and opening on an account with
 * nothing open clears it.
 */
export const SET_MARGIN_CALL_ACTIVE = namedStatement<{ account_id: string; active: boolean }>(
  `update accounts set margin_call_active = :active where id = :account_id`,
);

/**
 * Locks an account's open orders in ticket order before the account row: the same order as
 * every close, so a margin check and a close never wait on each other crosswise.
 */
export const LOCK_OPEN_ORDERS = namedStatement<{ account_id: string }>(
  `select 1 from orders where account_id = :account_id and status = 'open' order by ticket for update`,
);
