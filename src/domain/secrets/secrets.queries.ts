import { namedStatement } from '../../platform/named-sql';

/** The first process to start creates the development key; the others find it there. */
export const CREATE_DEVELOPMENT_KEY = namedStatement<{ id: string; key: string }>(
  `insert into development_data_keys (id, key, created_at) values (:id, :key, now()) on conflict (id) do nothing`,
);

export const READ_DEVELOPMENT_KEY = namedStatement<{ id: string }>(`select key from development_data_keys where id = :id`);
