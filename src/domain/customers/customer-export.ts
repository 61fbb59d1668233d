import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Writable } from 'node:stream';
import { Customer } from '../../entities/customer.entity';
import type { CustomerScope } from '../../platform/customer-scope';
import type { Column, ReportDocument, Row } from '../reports/report-document';
import { writeCsv } from '../reports/formats/csv-format';
import { customersInScope, customerView } from './customers';

/** The most customers one export holds: past it the file says so in its name, and a narrower filter (or a report) is the way. */
export const CUSTOMER_EXPORT_MAX_ROWS = 50_000;
const PAGE = 1000;

const col = (key: string, type: Column['type']): Column => ({ key, label: key, type });

/** The columns of the customer export: the customer view's, email and phone masked for staff without view_customer_pii. */
export const CUSTOMER_EXPORT_COLUMNS: Column[] = [
  col('id', 'text'),
  col('email', 'text'),
  col('phone', 'text'),
  col('first_name', 'text'),
  col('last_name', 'text'),
  col('country', 'text'),
  col('lifecycle', 'text'),
  col('sales_status', 'text'),
  col('verification_level', 'integer'),
  col('access', 'text'),
  col('account_manager_id', 'text'),
  col('team_id', 'text'),
  col('ftd_at', 'time'),
  col('ftd_amount', 'money'),
  col('created_at', 'time'),
];

/**
 * Writes the customers within `scope` (and `filter`), newest first, as CSV under the report
 * writer's rules (RFC 4180 quoting, formula prefixes): each row is the customer view the API
 * answers, so the masking of personal data is the view's, the same for the list and the file.
 */
export async function writeCustomerCsv(
  em: EntityManager,
  scope: CustomerScope,
  options: { pii: boolean; filter?: FilterQuery<Customer> },
  out: Writable,
): Promise<number> {
  const where: FilterQuery<Customer> = { $and: [options.filter ?? {}, customersInScope(scope)] };
  const reader = em.fork();
  async function* rows(): AsyncGenerator<Row> {
    let offset = 0;
    while (offset < CUSTOMER_EXPORT_MAX_ROWS) {
      const page = await reader.find(Customer, where, {
        orderBy: { createdAt: 'desc', id: 'desc' },
        limit: Math.min(PAGE, CUSTOMER_EXPORT_MAX_ROWS - offset),
        offset,
      });
      for (const c of page) yield customerView(c, { pii: options.pii });
      reader.clear();
      if (page.length < PAGE) return;
      offset += page.length;
    }
  }
  const doc: ReportDocument = {
    fileName: 'customers',
    title: 'Customers',
    subtitle: [],
    head: {},
    headTypes: {},
    summary: [],
    sections: [{ key: 'customers', title: 'Customers', columns: CUSTOMER_EXPORT_COLUMNS, rows }],
  };
  return (await writeCsv(doc, out)).rows;
}
