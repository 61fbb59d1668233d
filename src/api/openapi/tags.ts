/**
 * The document's tags (one per resource, which generated clients turn into one API class
 * each) and how they group by area. A route may only use a tag declared here.
 */
export const TAGS: Record<string, string> = {
  auth: 'Logins, token refresh, sessions and two-factor authentication (`/api/admin/users/login`, `/api/customer/login`, `/auth/*`)',
  'staff administration': 'Staff users and roles (`/api/admin/users`, `/api/admin/roles`)',
  'broker settings': 'Settings of this broker deployment (`/api/admin/settings`)',
  audit: 'Who changed what, when (`/api/admin/audit`)',
  'api tokens': 'Scoped long-lived tokens for integrations (`/api/crm/settings/api-tokens`)',
  customers: 'Customers and their own profile (`/api/crm/customers`, `/api/customer/me`)',
  accounts: 'Wallets and trading accounts (`/api/crm/.../accounts`, `/customers/me/accounts`)',
  money:
    'Deposits, transfers between your own accounts and the ledger (`/api/backoffice/accounts/...`, `/customers/me/transfer`, `/customers/me/transactions`)',
  withdrawals: 'Withdrawal requests from the wallet and their approval (`/customers/me/withdraw`, `/api/backoffice/withdrawals`)',
  payouts: "Payouts of prop accounts' profit to the customer's wallet (`/prop/payouts`)",
  groups: 'Trading groups and how each trades an instrument (`/groups`)',
  instruments: 'Tradable symbols (`/api/platform/instruments`)',
  orders: 'Market orders and bulk close (`/orders`)',
  'pending orders': 'Limit, stop and stop-limit orders (`/orders/pending`)',
  risk: 'Risk rules: classifying trading accounts by their closed orders, previews and saved rules (`/risk`)',
  simulator: 'The price source: quotes and the random walk (`/simulator`)',
  observability: 'Liveness, readiness and metrics',
  queues: 'The job queues, for operators and their scripts (`/api/admin/queues`); the dashboard is at /admin/queues',
};

export const TAG_GROUPS: Array<{ name: string; tags: string[] }> = [
  { name: 'Identity and access', tags: ['auth', 'staff administration', 'api tokens', 'broker settings', 'audit'] },
  { name: 'Customers and money', tags: ['customers', 'accounts', 'money', 'withdrawals', 'payouts'] },
  { name: 'Trading', tags: ['groups', 'instruments', 'orders', 'pending orders', 'risk', 'simulator'] },
  { name: 'Operations', tags: ['observability', 'queues'] },
];
