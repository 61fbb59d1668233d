import type { Request } from 'express';
import { DOCUMENT_MAX_BYTES } from '../../domain/compliance/documents';
import { RECOGNITION_BYTES, recogniseDocument } from '../../domain/compliance/file-kind';
import type { DocumentContentType } from '../../entities/customer-document.entity';
import { fieldError } from '../../platform/errors';
import { readUpload } from './multipart-upload';

export interface RecognisedFile {
  name: string;
  bytes: Buffer;
  contentType: DocumentContentType;
}

/**
 * The file rules of an identity document, for every upload that follows them (documents,
 * conversation attachments): one `file` part of at most 10 MiB (413 as soon as it is passed),
 * not empty, a PDF, JPEG or PNG recognised from its content. `fields` are the text parts the
 * form may carry besides it; their checks are the caller's.
 */
export async function readDocumentUpload(
  req: Request,
  fields: readonly string[],
): Promise<{ fields: Record<string, string>; file: () => RecognisedFile }> {
  const upload = await readUpload(req, { maxFileBytes: DOCUMENT_MAX_BYTES, fields, fileField: 'file' });
  // The file is checked when asked for, so the caller's own field errors come first, as they always did.
  const file = (): RecognisedFile => {
    if (!upload.file) throw fieldError('body', ['file'], 'Field required', 'missing');
    if (upload.file.bytes.length === 0) throw fieldError('body', ['file'], 'The file is empty', 'value_error');
    const contentType = recogniseDocument(upload.file.bytes.subarray(0, RECOGNITION_BYTES));
    if (!contentType) throw fieldError('body', ['file'], 'The file is not a PDF, JPEG or PNG', 'value_error');
    return { name: upload.file.name, bytes: upload.file.bytes, contentType };
  };
  return { fields: upload.fields, file };
}
