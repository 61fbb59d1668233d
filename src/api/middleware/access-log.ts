import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../../platform/metrics';

/** One log line and one histogram observation per request, labelled by route template. */
export function accessLog(logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      // Unmatched paths share one label, so random URLs cannot blow up the series count.
      const route = req.routeTemplate ?? 'unmatched';
      metrics.httpDuration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      logger.info(
        { request_id: req.requestId, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 },
        'request',
      );
    });
    next();
  };
}
