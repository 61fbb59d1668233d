import type { MailTemplate } from '../renderer';

export interface DefaultMailTemplate extends MailTemplate {
  name: string;
  /** The values each mail of this template is queued with (secrets marked): the contract with its sender. */
  placeholders: string[];
}

export const wrap = (paragraphs: string[]) => paragraphs.map((p) => `<p>${p}</p>`).join('');
