import type { DocumentContentType } from '../../entities/customer-document.entity';

/**
 * The media type of a submitted file, from its first bytes: a PDF, a JPEG or a PNG, whatever
 * its name or the client's Content-Type say; anything else is undefined (422).
 *
 * Checked here rather than with the `file-type` package: it is ES modules only, as are the
 * four tokenizer packages it needs, which this CommonJS build and jest's loader would each have
 * to be taught (moduleResolution node10 cannot even see its types), to tell apart three formats
 * that each open with a fixed signature. The checks are those file-type makes for them, plus
 * the PNG's first chunk, which must be IHDR (a file that only copies the 8 signature bytes
 * is not an image).
 */
export function recogniseDocument(head: Buffer): DocumentContentType | undefined {
  if (startsWith(head, PDF)) return 'application/pdf';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (startsWith(head, PNG) && head.length >= 16 && head.subarray(12, 16).toString('latin1') === 'IHDR') return 'image/png';
  return undefined;
}

/** How many leading bytes recogniseDocument needs. */
export const RECOGNITION_BYTES = 16;

const PDF = Buffer.from('%PDF-', 'latin1');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function startsWith(head: Buffer, signature: Buffer): boolean {
  return head.length >= signature.length && head.subarray(0, signature.length).equals(signature);
}
