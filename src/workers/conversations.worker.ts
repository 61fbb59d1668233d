import { ConversationSlaJob, ResolvePendingConversationsJob, WakeSnoozedConversationsJob } from '../jobs/conversations.job';
import { reportSlaBreaches, resolveStalePending, wakeSnoozed } from '../domain/conversations/conversation-sweeps';
import { defineProcessor } from './processor';

export const resolvePendingConversationsProcessor = defineProcessor(ResolvePendingConversationsJob, async (_payload, { em }) => ({
  resolved: await resolveStalePending(em),
}));

export const wakeSnoozedConversationsProcessor = defineProcessor(WakeSnoozedConversationsJob, async (_payload, { em }) => ({
  woken: await wakeSnoozed(em),
}));

export const conversationSlaProcessor = defineProcessor(ConversationSlaJob, async (_payload, { em }) => ({
  breached: await reportSlaBreaches(em),
}));
