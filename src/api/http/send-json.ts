import type { Express, Request, Response } from 'express';

/** express's ETag generator for the app's `etag` setting (weak ETags by default), or none. */
type ETagOf = (body: Buffer, encoding?: BufferEncoding) => string | undefined;

/**
 * Writes a JSON reply with the bytes express 5's `res.status(status).json(body)` writes: the
 * body as JSON.stringify makes it, `Content-Type: application/json; charset=utf-8`, its
 * Content-Length, the ETag of the app's `etag` setting, no body on HEAD.
 *
 * Hot path: every reply of the route table. `res.json` looks up three app settings,
 * parses and re-formats the content type it has just set to add the charset, looks up the
 * ETag setting and reads back headers it set, on every call; here that is done once. The
 * uncommon cases (a handler that set its own Content-Type, a status without a body, a
 * conditional request that may answer 304, JSON settings changed from express's defaults)
 * go to `res.json` itself, so they keep its rules exactly (test/unit/send-json.test.ts
 * checks both against express).
 */
export function jsonSender(app: Express): (req: Request, res: Response, status: number, body: unknown) => void {
  const etagOf = app.get('etag fn') as ETagOf | undefined;
  const plainJson = !app.get('json replacer') && !app.get('json spaces') && !app.get('json escape');
  return (req, res, status, body) => {
    if (
      !plainJson ||
      status === 204 ||
      status === 205 ||
      status === 304 ||
      res.hasHeader('content-type') ||
      res.hasHeader('etag') ||
      req.headers['if-none-match'] !== undefined ||
      req.headers['if-modified-since'] !== undefined
    ) {
      res.status(status).json(body);
      return;
    }
    const text = JSON.stringify(body) as string | undefined;
    if (text === undefined) {
      res.status(status).json(body);
      return;
    }
    const bytes = Buffer.from(text);
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', bytes.length);
    const etag = etagOf?.(bytes);
    if (etag) res.setHeader('ETag', etag);
    if (req.method === 'HEAD') res.end();
    else res.end(bytes);
  };
}
