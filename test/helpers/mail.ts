import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { queueMail } from '../../src/domain/mail/mail-outbox';
import type { MailMessage } from '../../src/entities/mail-message.entity';
import { sql, type TestApp } from './test-app';

/**
 * A password-reset mail committed to the outbox, not yet dispatched, with a fresh secret
 * reset link (what a reset request will queue).
 */
export async function queueResetMail(
  app: TestApp,
  options: { to?: string; locale?: string } = {},
): Promise<{ mail: MailMessage; token: string; resetUrl: string }> {
  const token = randomBytes(32).toString('base64url');
  const resetUrl = `https://backoffice.broker.test/reset?token=${token}`;
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const mail = queueMail(em, app.runtime.services.mailSecrets, {
    template: 'password_reset',
    locale: options.locale ?? 'en',
    to: options.to ?? 'customer@broker.test',
    data: { first_name: 'Ada' },
    secretData: { reset_url: resetUrl },
  });
  await em.flush();
  return { mail, token, resetUrl };
}

/** Every column of a mail row as one text, for "this never appears anywhere in the row" checks. */
export async function mailRowText(app: TestApp, id: string): Promise<string> {
  const [row] = await sql<{ row: string }>(app, 'select row_to_json(m)::text as row from mail_messages m where id = ?', [id]);
  if (!row) throw new Error(`no mail_messages row ${id}`);
  return row.row;
}

/** A received message's text with quoted-printable soft breaks and escapes undone, so a long link reads whole. */
export function decodedMessage(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
