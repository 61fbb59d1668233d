import { namedStatement } from '../../platform/named-sql';

/** Whether the record a task target names belongs to the customer (a deposit through its account). */
export const TARGET_OF_CUSTOMER = namedStatement<{ type: string; id: string; customer_id: string }>(
  `select 1 as found where
        (:type::text = 'withdrawal' and exists (select 1 from withdrawals w where w.id = :id::uuid and w.customer_id = :customer_id::uuid))
     or (:type::text = 'payout' and exists (select 1 from payouts p where p.id = :id::uuid and p.customer_id = :customer_id::uuid))
     or (:type::text = 'document' and exists (select 1 from customer_documents d where d.id = :id::uuid and d.customer_id = :customer_id::uuid))
     or (:type::text = 'conversation' and exists (select 1 from conversations c where c.id = :id::uuid and c.customer_id = :customer_id::uuid))
     or (:type::text = 'deposit' and exists (select 1 from deposit_intents d join accounts a on a.id = d.account_id
                                              where d.id = :id::uuid and a.customer_id = :customer_id::uuid))`,
);
