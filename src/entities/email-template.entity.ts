import { Entity, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export interface TemplateTranslation {
  subject: string;
  html: string;
  text: string;
}

/**
 * A mail template operators edit: a unique key (what the service asks for: `password_reset`),
 * a name, and per locale a subject, an html and a text part with `{{placeholders}}`. The
 * service's own mails ship as `builtIn` templates (a migration writes them): they can be
 * edited, not deleted, and their key is fixed.
 */
@Entity({ tableName: 'email_templates' })
export class EmailTemplate extends BaseEntity<'builtIn'> {
  @Property({ type: 'string', length: 64 })
  @Unique()
  key!: string;

  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'string', length: 35 })
  defaultLocale!: string;

  @Property({ type: 'json' })
  translations!: Record<string, TemplateTranslation>;

  @Property({ type: 'boolean' })
  builtIn: boolean = false;
}
