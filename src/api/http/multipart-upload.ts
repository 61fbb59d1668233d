import busboy from 'busboy';
import type { Request } from 'express';
import { AppError, fieldError, ValidationFailure } from '../../platform/errors';

/** Room for the multipart framing and the small fields around a file at the cap. */
const FRAMING_BYTES = 64 * 1024;

export interface UploadLimits {
  /** The largest file, in bytes: one byte more is 413. */
  maxFileBytes: number;
  /** The text fields the form may carry; any other field is 422 extra_forbidden. */
  fields: readonly string[];
  /** The name of the one file part. */
  fileField: string;
}

export interface Upload {
  fields: Record<string, string>;
  /** Undefined when the form carried no file part. */
  file: { name: string; bytes: Buffer } | undefined;
}

const malformed = () =>
  new ValidationFailure([{ loc: ['body'], msg: 'The multipart body is malformed or ends early', type: 'value_error' }]);

const tooLarge = (max: number) =>
  new AppError(413, 'PAYLOAD_TOO_LARGE', `The file is larger than ${max / (1024 * 1024)} MiB: nothing was kept`);

/** How long the rest of an oversized body is read and dropped after the 413, before the connection is cut. */
const LINGER_MS = 1000;

/**
 * Past the cap the service answers at once and reads no further than a moment: once the 413
 * is written it half-closes the connection (the client sees the end of the answer), drops what
 * still arrives for LINGER_MS so the client can read the answer rather than meet a reset, then
 * cuts it. Closing at once would make the kernel reset a connection with unread bytes, and the
 * answer with it; reading to the end would read a body of any size.
 */
function refuseOversized(req: Request, max: number): AppError {
  const socket = req.socket;
  req.unpipe();
  req.resume();
  req.res?.once('finish', () => {
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
  return tooLarge(max);
}

/** Control characters and the bidirectional overrides, which a file name shown to staff must not carry. */
const NOT_IN_A_NAME = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/gu;

/** The file name as the client gave it, reduced to something safe to store and show: its last path segment, one line, 255 characters. */
export function cleanFileName(raw: string | undefined): string {
  const last = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const clean = last.replace(NOT_IN_A_NAME, '').trim().slice(0, 255);
  return clean || 'document';
}

/**
 * Reads a multipart/form-data body with busboy, streaming: the file's bytes are counted as
 * they arrive and the read stops at `maxFileBytes` + 1 (413, answered at once and the connection
 * closed, with or without a declared Content-Length), so no more than the cap is ever held.
 * Everything else that is wrong with the form is a 4xx naming the part: a second file, a file
 * under another name, an unknown field, a field too long, a body that ends before its
 * closing boundary. Nothing is stored here: the caller stores what this returns, or nothing.
 */
export function readUpload(req: Request, limits: UploadLimits): Promise<Upload> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type))
    return Promise.reject(
      new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the document as multipart/form-data with the parts `type` and `file`'),
    );
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxFileBytes + FRAMING_BYTES)
    return Promise.reject(refuseOversized(req, limits.maxFileBytes));
  return new Promise<Upload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: {
          // One more of each than the form takes: the extra one reaches the handlers below,
          // which name it (a second file, an unknown field) rather than refuse the form vaguely.
          // busboy stops a file when it reaches fileSize, so the cap + 1 tells a file of exactly
          // the cap from one over it.
          fileSize: limits.maxFileBytes + 1,
          files: 1,
          fields: limits.fields.length + 1,
          parts: limits.fields.length + 3,
          fieldSize: 1024,
          fieldNameSize: 100,
          headerPairs: 20,
        },
      });
    } catch {
      // A multipart Content-Type without a boundary.
      reject(fieldError('body', [], 'The multipart body cannot be read: its Content-Type names no boundary', 'value_error'));
      return;
    }
    const fields: Record<string, string> = {};
    let file: Upload['file'];
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // The rest of the body is read and dropped, so the client can read the answer.
      req.resume();
      reject(err);
    };

    parser.on('field', (name, value, info) => {
      if (!limits.fields.includes(name))
        return fail(fieldError('body', [name], 'Extra inputs are not permitted', 'extra_forbidden'));
      if (info.valueTruncated) return fail(fieldError('body', [name], 'The field is too long', 'string_too_long'));
      if (name in fields) return fail(fieldError('body', [name], 'The field is sent twice', 'value_error'));
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== limits.fileField) {
        stream.resume();
        return fail(fieldError('body', [name], 'Extra inputs are not permitted', 'extra_forbidden'));
      }
      const chunks: Buffer[] = [];
      // A body that ends inside the file fails the file's stream as well as the parser.
      stream.on('error', () => fail(malformed()));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        stream.resume();
        fail(refuseOversized(req, limits.maxFileBytes));
      });
      stream.on('end', () => {
        if (settled) return;
        const bytes = Buffer.concat(chunks);
        if (bytes.length > limits.maxFileBytes) fail(refuseOversized(req, limits.maxFileBytes));
        else file = { name: cleanFileName(info.filename), bytes };
      });
    });
    parser.on('filesLimit', () => fail(fieldError('body', [limits.fileField], 'Send exactly one file', 'value_error')));
    parser.on('fieldsLimit', () => fail(fieldError('body', [], 'The form carries more fields than it takes', 'value_error')));
    parser.on('partsLimit', () => fail(fieldError('body', [], 'The form carries more parts than it takes', 'value_error')));
    parser.on('error', () => fail(malformed()));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve({ fields, file });
    });
    req.on('aborted', () => fail(new ValidationFailure([{ loc: ['body'], msg: 'The upload was aborted', type: 'value_error' }])));
    req.pipe(parser);
  });
}
