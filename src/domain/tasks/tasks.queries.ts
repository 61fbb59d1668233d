import { namedStatement } from '../../platform/named-sql';

/**
 * Whether the record a task target names belongs to the customer (a deposit through its
 * account). An account is named by its login (`login`), any other record by its id (`uuid`);
 * the other parameter is null, so no text is ever cast to a type it is not.
 */
export const TARGET_OF_CUSTOMER = namedStatement<{
  type: string;
  uuid: string | null;
  login: string | null;
  customer_id: string;
}>(
  `select 1 as found where
        (:type::text = 'account' and exists (select 1 from accounts a where a.login = :login::bigint and a.customer_id = :customer_id::uuid))
     or (:type::text = 'withdrawal' and exists (select 1 from withdrawals w where w.id = :uuid::uuid and w.customer_id = :customer_id::uuid))
     or (:type::text = 'payout' and exists (select 1 from payouts p where p.id = :uuid::uuid and p.customer_id = :customer_id::uuid))
     or (:type::text = 'document' and exists (select 1 from customer_documents d where d.id = :uuid::uuid and d.customer_id = :customer_id::uuid))
     or (:type::text = 'conversation' and exists (select 1 from conversations c where c.id = :uuid::uuid and c.customer_id = :customer_id::uuid))
     or (:type::text = 'deposit' and exists (select 1 from deposit_intents d join accounts a on a.id = d.account_id
                                              where d.id = :uuid::uuid and a.customer_id = :customer_id::uuid))`,
);
