/**
 * Reset requests in one-hour windows: per email from one client address, and per client
 * address whatever the email. Never per email alone: a stranger could then spend an email's
 * budget and keep its owner from resetting for the whole window. What protects the owner's
 * inbox from a stranger asking from many addresses is RESET_MAIL_INTERVAL_SECONDS
 * (password-reset.ts). A module of its own because identity.ts sizes the throttle's window
 * with it, and password-reset.ts imports identity.ts.
 */
export const RESET_LIMITS = { emailPerAddress: 5, address: 20, windowSeconds: 3600 } as const;
