/**
 * The document's tags (one per resource, which generated clients turn into one API class
 * each) and how they group by area. A route may only use a tag declared here.
 */
export const TAGS: Record<string, string> = {
  auth: 'Logins, token refresh, sessions and two-factor authentication (`/api/admin/users/login`, `/api/customer/login`, `/auth/*`)',
  'staff administration': 'Staff users and roles (`/api/admin/users`, `/api/admin/roles`)',
  'broker settings':
    'Settings of this broker deployment (`/api/admin/settings`) and the keys of its secrets at rest (`/api/admin/secrets`)',
  audit: 'Who changed what, when (`/api/admin/audit`)',
  teams:
    "Teams of staff, nested, with members and leads: with a user's data scope they decide whose customers it sees (`/api/admin/teams`)",
  tasks:
    'Tasks for staff about customers, their states, reminders and the rules that make them (`/api/crm/tasks`, `/api/admin/task-rules`)',
  'api tokens': 'Scoped long-lived tokens for integrations (`/api/crm/settings/api-tokens`)',
  'password reset': 'A customer who forgot the password gets a mail with a single-use link (`/customers/password-reset/*`)',
  customers: 'Customers and their own profile (`/api/crm/customers`, `/api/customer/me`)',
  registration:
    'Self-registration with a confirmation mail (`/customers/register`), and leads staff enter and invite (`/api/crm/leads`)',
  fraud:
    'Fraud lists, rules and their preview, review cases (`/api/backoffice/fraud/*`) and linked customers (`/api/crm/customers/{id}/links`)',
  'customer notes': 'Staff notes on a customer, edited by their author within a day (`/api/crm/customers/{id}/notes`)',
  conversations:
    'Support conversations between a customer and the desk, with internal notes for staff (`/customers/me/conversations`, `/api/crm/conversations`)',
  accounts: 'Wallets and trading accounts (`/api/crm/.../accounts`, `/customers/me/accounts`)',
  money:
    'Deposits, transfers between your own accounts and the ledger (`/api/backoffice/accounts/...`, `/customers/me/transfer`, `/customers/me/transactions`)',
  bonuses:
    'Credit (the non-withdrawable bucket), bonus programmes and bonuses, promo codes and campaigns (`/api/backoffice/accounts/{login}/credit`)',
  partners:
    'Introducing brokers: plans, the partner tree, attribution, rewards and their clawback, and the partner portal (`/customers/me/partner`)',
  withdrawals: 'Withdrawal requests from the wallet and their approval (`/customers/me/withdraw`, `/api/backoffice/withdrawals`)',
  payments:
    "Deposits through payment providers: the providers (`/api/admin/payment-providers`), what a customer may pay with and its deposit intents (`/customers/me/payment-methods`, `/customers/me/deposits`), the review queue (`/api/backoffice/deposits`), the providers' signed callbacks (`/api/integrations/payments/{provider_id}/callbacks`) and the simulator provider (`/simulator/payments`)",
  integrations:
    'The registry of outside systems (payment providers, KYC, CRM, marketing) with the log of every call they made to us (`/api/admin/integrations`), and the event feed a CRM pulls (`/api/crm/events`)',
  payouts: "Payouts of prop accounts' profit to the customer's wallet (`/prop/payouts`)",
  compliance:
    'Identity documents and verification levels: what a customer submits, staff review, and what each level may do (`/customers/me/documents`, `/api/crm/documents`, `/api/admin/verification-levels`)',
  reports:
    'Reports built by the workers as CSV, PDF or JSON files: statements, trades, exposure, deposits and withdrawals, daily snapshots (`/api/backoffice/reports`, `/customers/me/statements`)',
  prop: "Prop challenges: programs with phases and rules, and each trader's stages (`/prop/programs`, `/prop/challenges`, `/customers/me/challenges`)",
  notifications: 'What happened to your money and positions, newest first (`/customers/me/notifications`)',
  groups: 'Trading groups and how each trades an instrument (`/groups`)',
  instruments: 'Tradable symbols (`/api/platform/instruments`), and what a customer may trade (`/customers/me/instruments`)',
  quotes: 'The latest prices, for every caller (`/quotes`)',
  orders: 'Market orders and bulk close (`/orders`)',
  'pending orders': 'Limit, stop and stop-limit orders (`/orders/pending`)',
  'end of day':
    'The rollover: swaps, daily snapshots and statements, run per trading date (`/api/backoffice/eod/runs`, `.../accounts/{login}/daily`)',
  risk: 'Risk rules: classifying trading accounts by their closed orders, previews and saved rules (`/risk`)',
  simulator: 'The price source: quotes and the random walk (`/simulator`)',
  webhooks: [
    'Signed, batched event deliveries to integrators, their attempts and redelivery (`/webhooks`).',
    '',
    'Each delivery is `POST endpoint_url` with `{"events": [{"id", "type", "created_at", "data"}]}` and the Standard',
    'Webhooks headers `webhook-id` (the same on every retry of a batch: deduplicate on it), `webhook-timestamp` and',
    '`webhook-signature`. Verify our signature with the raw body, before parsing it, for example in Node.js with the',
    '`standardwebhooks` package:',
    '',
    '```js',
    "const { Webhook } = require('standardwebhooks');",
    'const wh = new Webhook(process.env.WEBHOOK_SECRET); // the whsec_... secret you registered',
    "app.post('/hooks/trading', express.raw({ type: 'application/json' }), (req, res) => {",
    '  let payload;',
    '  try {',
    '    payload = wh.verify(req.body, req.headers); // throws on a bad signature or a timestamp over 5 minutes off',
    '  } catch {',
    '    return res.status(400).end();',
    '  }',
    '  for (const event of payload.events) handle(event); // in order; skip an event.id you have seen',
    '  res.status(204).end();',
    '});',
    '```',
    '',
    'A secret that is not of the `whsec_` form is used as its UTF-8 bytes:',
    "`new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })`. By hand: base64(HMAC-SHA256(key,",
    '`"<webhook-id>.<webhook-timestamp>.<raw body>"`)) must equal the part after `v1,` of one of the space-separated',
    'signatures, compared in constant time.',
  ].join('\n'),
  'email templates':
    'Mail templates operators edit, with their translations and a preview (`/email-templates`); the service sends its own mails from them',
  observability: 'Liveness, readiness and metrics',
  documentation: 'This document (`/openapi.json`) and a page that renders it (`/docs`)',
  queues: 'The job queues, for operators and their scripts (`/api/admin/queues`); the dashboard is at /admin/queues',
  streams:
    "Live server-sent event streams (`text/event-stream`): quotes (`/streams/quotes`), a customer's own events (`/customers/me/stream`) and every event for the back office (`/api/backoffice/stream`), resumable with `Last-Event-ID`",
};

export const TAG_GROUPS: Array<{ name: string; tags: string[] }> = [
  { name: 'Identity and access', tags: ['auth', 'staff administration', 'teams', 'api tokens', 'broker settings', 'audit'] },
  {
    name: 'Customers and money',
    tags: [
      'customers',
      'registration',
      'customer notes',
      'tasks',
      'fraud',
      'conversations',
      'compliance',
      'password reset',
      'accounts',
      'money',
      'bonuses',
      'partners',
      'withdrawals',
      'payments',
      'payouts',
      'prop',
      'notifications',
      'reports',
    ],
  },
  { name: 'Trading', tags: ['groups', 'instruments', 'quotes', 'orders', 'pending orders', 'end of day', 'risk', 'simulator'] },
  { name: 'Integrations', tags: ['webhooks', 'streams', 'integrations'] },
  { name: 'Operations', tags: ['email templates', 'observability', 'queues', 'documentation'] },
];
