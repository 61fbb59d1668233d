import type { Response } from 'express';

/**
 * Sends a stored file as a download: named `name`, typed by the kind recognised from its content
 * at upload (attachment() alone would take the type from the name's extension), and written a
 * piece at a time as it was read, never joined into one buffer first.
 */
export function sendFile(res: Response, file: { name: string; contentType: string; pieces: Buffer[] }): undefined {
  res.status(200);
  res.attachment(file.name);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.pieces.reduce((n, p) => n + p.length, 0)));
  for (const piece of file.pieces) res.write(piece);
  res.end();
  return undefined;
}
