/**
 * Every domain event type the service writes to its outbox: what webhooks may subscribe to
 * (an unknown type is refused), what consumers match on, and what `recordEvent` accepts.
 * Type names are persistent identifiers: integrators filter on them. Add, never rename.
 * Each event's `data` is the public view of its aggregate as the API answers it.
 */
export const EVENT_TYPES = [
  'customer.created',
  'deposit.created',
  'deposit.completed',
  'deposit.failed',
  'deposit.review',
  'deposit.charged_back',
  'deposit.refunded',
  'order.opened',
  'order.closed',
  'pending_order.modified',
  'pending_order.cancelled',
  'pending_order.expired',
  'pending_order.triggered',
  'pending_order.filled',
  'transfer.completed',
  'withdrawal.requested',
  'withdrawal.approved',
  'withdrawal.rejected',
  'payout.requested',
  'payout.approved',
  'payout.rejected',
  'prop.challenge_failed',
  'prop.challenge_passed',
  'account.margin_call',
  'account.stop_out',
  'account.negative_balance_compensated',
  'account.risk_classified',
  'document.submitted',
  'document.approved',
  'document.rejected',
  'customer.verified',
  'webhook.test',
  'webhook.disabled',
  'group.updated',
  'customer.lifecycle_changed',
  'settings.updated',
  'conversation.created',
  'conversation.message_added',
  'conversation.status_changed',
  'conversation.sla_breached',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
