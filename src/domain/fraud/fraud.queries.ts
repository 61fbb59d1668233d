import { namedStatement } from '../../platform/named-sql';

/** Serialises the creation of fraud rules, so two at once cannot both pass the cap. */
export const LOCK_FRAUD_RULES = namedStatement<Record<string, never>>(`select pg_advisory_xact_lock(hashtext('fraud_rules'))`);
