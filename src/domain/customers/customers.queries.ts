import { namedStatement } from '../../platform/named-sql';

/** The password-reset statements, with named parameters: a token is consumed by one conditional update. */

export const CONSUME_RESET_TOKEN = namedStatement<{ token_hash: string }>(
  `update password_reset_tokens set used_at = now(), updated_at = now()
    where token_hash = :token_hash and used_at is null and expires_at > now() returning id`,
);

/** Every other open token of the customer dies with the one used. */
export const CLOSE_RESET_TOKENS = namedStatement<{ customer_id: string }>(
  'update password_reset_tokens set used_at = now(), updated_at = now() where customer_id = :customer_id and used_at is null',
);
