import { BaseEntity } from './base.entity';
import { MailMessage } from './mail-message.entity';

/** Every entity the ORM knows. Listed explicitly: no folder scanning at start-up. */
export const ENTITIES = [BaseEntity, MailMessage];

export { BaseEntity, MailMessage };
