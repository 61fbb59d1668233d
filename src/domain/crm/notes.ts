import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { CustomerNote } from '../../entities/customer-note.entity';
import type { StaffCaller } from '../../platform/caller';
import { inScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { AppError, errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';

/** How long after writing it the author may still edit a note. */
export const NOTE_EDIT_WINDOW_HOURS = 24;

export const NoteBody = z.string().trim().min(1).max(10_000);

export const NoteSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    author_id: z.uuid(),
    body: z.string(),
    pinned: z.boolean(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'CustomerNote' });
export type NoteView = z.output<typeof NoteSchema>;

export function noteView(n: CustomerNote): NoteView {
  return {
    id: n.id,
    customer_id: n.customerId,
    author_id: n.authorId,
    body: n.body,
    pinned: n.pinned,
    created_at: n.createdAt.toISOString(),
    updated_at: n.updatedAt.toISOString(),
  };
}

async function customerInScope(em: EntityManager, scope: CustomerScope, customerId: string): Promise<Customer> {
  return inScopeOr404(scope, await em.findOne(Customer, customerId), (c) => c.id, 'Customer');
}

export async function addNote(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  customerId: string,
  input: { body: string; pinned?: boolean | undefined },
): Promise<NoteView> {
  await customerInScope(em, scope, customerId);
  const note = em.create(CustomerNote, { customerId, authorId: actor.userId, body: input.body, pinned: input.pinned ?? false });
  const view = noteView(note);
  recordAudit(em, actor, { action: 'note.created', entityType: 'customer_note', entityId: note.id, after: view });
  await em.flush();
  return view;
}

/** A customer's notes, pinned first, then newest first; deleted ones are gone from here. */
export async function listNotes(em: EntityManager, scope: CustomerScope, customerId: string): Promise<NoteView[]> {
  await customerInScope(em, scope, customerId);
  const notes = await em.find(
    CustomerNote,
    { customerId, deletedAt: null },
    { orderBy: { pinned: 'desc', createdAt: 'desc', id: 'desc' }, limit: 500 },
  );
  return notes.map(noteView);
}

async function liveNote(em: EntityManager, scope: CustomerScope, customerId: string, noteId: string): Promise<CustomerNote> {
  await customerInScope(em, scope, customerId);
  const note = await em.findOne(CustomerNote, { id: noteId, customerId, deletedAt: null });
  if (!note) throw errors.notFound('Note');
  return note;
}

/**
 * Only the author edits a note (403 NOT_NOTE_AUTHOR for anyone else), and only within
 * NOTE_EDIT_WINDOW_HOURS of writing it (409 NOTE_LOCKED after): a note is a record of what was
 * known then. Audited with before and after.
 */
export async function editNote(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  customerId: string,
  noteId: string,
  patch: { body?: string | undefined; pinned?: boolean | undefined },
): Promise<NoteView> {
  const note = await liveNote(em, scope, customerId, noteId);
  if (note.authorId !== actor.userId) throw new AppError(403, 'NOT_NOTE_AUTHOR', 'Only the author of a note may edit it');
  if (Date.now() - note.createdAt.getTime() > NOTE_EDIT_WINDOW_HOURS * 3600_000)
    throw errors.conflict('NOTE_LOCKED', `A note can be edited for ${NOTE_EDIT_WINDOW_HOURS} hours after it is written`);
  const before = noteView(note);
  if (patch.body !== undefined) note.body = patch.body;
  if (patch.pinned !== undefined) note.pinned = patch.pinned;
  note.updatedAt = new Date();
  const after = noteView(note);
  recordAudit(em, actor, { action: 'note.updated', entityType: 'customer_note', entityId: note.id, before, after });
  await em.flush();
  return after;
}

/** Soft delete: the note leaves the lists and the timeline, its row and audit trail stay. */
export async function deleteNote(
  em: EntityManager,
  actor: StaffCaller,
  scope: CustomerScope,
  customerId: string,
  noteId: string,
): Promise<void> {
  const note = await liveNote(em, scope, customerId, noteId);
  note.deletedAt = new Date();
  note.deletedBy = actor.userId;
  recordAudit(em, actor, { action: 'note.deleted', entityType: 'customer_note', entityId: note.id, before: noteView(note) });
  await em.flush();
}
