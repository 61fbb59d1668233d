import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { AppServices } from '../../app-services';
import { recordAudit } from '../../domain/audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { openDashboardSession, resolveDashboardSession, type DashboardLifetimes } from '../../domain/identity/dashboard-sessions';
import { checkLogin } from '../../domain/identity/login';
import { revokeSessions } from '../../domain/identity/sessions';
import { ALL_QUEUES } from '../../jobs/queues';
import { AppError } from '../../platform/errors';
import { allowedChange, HIDDEN_CONTROLS_CSS } from './dashboard-actions';
import { livePage, LIVE_SCRIPT } from './live-page';
import { mountFavicon } from './favicon';
import { loginPage } from './login-page';

/**
 * The queue dashboard: bull-board at /admin/queues, every
 * queue of src/jobs registered from the same table the workers use. A browser cannot send a
 * Bearer header, so staff sign in on /admin/login and get a cookie that is its own credential:
 * an opaque reference to a session of kind `dashboard` (see dashboard-sessions), never an
 * access token, ended by sign-out, by its idle and absolute limits, by DELETE
 * /auth/sessions/{id} or by the user's deactivation. Looking needs view_queues; a change needs
 * manage_queues, must be one of the few the dashboard allows (dashboard-actions), must come
 * from this origin (CSRF), and is audited.
 */
export const DASHBOARD_PATH = '/admin/queues';
const LOGIN_PATH = '/admin/login';
const STYLESHEET_PATH = '/admin/dashboard.css';
const COOKIE = 'admin_session';
const LIVE_PATH = '/admin/live';
const LIVE_SCRIPT_PATH = '/admin/live.js';

/**
 * Retries of failed jobs only (see dashboard-actions), so no retry button on completed ones.
 * BaseAdapter reads allowCompletedRetries; BullMQAdapter's declared options type omits it.
 */
const ADAPTER_OPTIONS = { allowRetries: true, allowCompletedRetries: false };

declare module 'express-serve-static-core' {
  interface Request {
    dashboardCaller?: StaffCaller;
  }
}

/**
 * The dashboard pages' own headers: a CSP for their assets, and a Referrer-Policy that lets
 * the browser name this origin on same-origin requests (helmet's no-referrer makes it send
 * `Origin: null` on a form post, and the CSRF check would refuse every sign-in).
 */
const pageCsp = (scripts: boolean) => [
  helmet.referrerPolicy({ policy: 'same-origin' }),
  helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: scripts ? ["'self'"] : ["'none'"],
      // bull-board and the login page style elements inline; no inline script anywhere.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  }),
];

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

interface CookieRules {
  secure: boolean;
  maxAgeSeconds: number;
}

function setSessionCookie(res: Response, value: string | null, rules: CookieRules): void {
  const attributes = ['HttpOnly', 'SameSite=Strict', 'Path=/admin', `Max-Age=${value ? rules.maxAgeSeconds : 0}`];
  if (rules.secure) attributes.push('Secure');
  res.append('Set-Cookie', `${COOKIE}=${value ? encodeURIComponent(value) : ''}; ${attributes.join('; ')}`);
}

/**
 * bull-board's page, with the stylesheet that hides the controls of refused changes (see
 * dashboard-actions), and without its web-font link: the page asks no other host for anything
 * (the CSP would refuse it anyway), and its text falls back to the system font.
 */
function adjustBoardPage(res: Response): void {
  const send = res.send.bind(res);
  res.send = (body?: unknown) =>
    send(
      typeof body === 'string'
        ? body
            .replace(/<link[^>]*href="https:\/\/fonts\.googleapis\.com[^>]*>\s*/g, '')
            .replace('</head>', `<link href="${STYLESHEET_PATH}" rel="stylesheet"></head>`)
        : body,
    );
}

/**
 * Where the sign-in form sends the browser once signed in: the dashboard page it was turned
 * away from, when `next` names one of this origin's dashboard pages; the queues otherwise. Only
 * a path under /admin/ is taken, never `//host` or a scheme, so the form cannot be made to send
 * anyone to another site.
 */
export function afterSignIn(next: unknown): string {
  if (typeof next !== 'string' || next.length > 512) return DASHBOARD_PATH;
  return /^\/admin\/(?:queues|live)(?:[/?#][^\\\s]*)?$/.test(next) && !next.startsWith('//') ? next : DASHBOARD_PATH;
}

/** The sign-in page's address that comes back to this request's page afterwards. */
const signInFor = (req: Request) => `${LOGIN_PATH}?next=${encodeURIComponent(req.originalUrl)}`;

/** A state change must come from a page of this origin: SameSite=Strict already keeps other sites' cookies out; this is the second lock. */
function sameOrigin(req: Request): boolean {
  const origin = req.get('origin') ?? req.get('referer');
  if (!origin) return false;
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false;
  }
}

export function mountQueueDashboard(app: Express, services: AppServices): void {
  const lifetimes: DashboardLifetimes = services.config.dashboard;
  const cookieRules = { secure: services.config.dashboard.cookieSecure, maxAgeSeconds: lifetimes.absoluteSeconds };

  const board = new ExpressAdapter();
  board.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: ALL_QUEUES.map((name) => new BullMQAdapter(services.jobs.queue(name), ADAPTER_OPTIONS)),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'Trading queues', miscLinks: [{ text: 'Sign out', url: '/admin/logout' }] } },
  });

  const form = express.urlencoded({ extended: false, limit: '8kb' });
  mountFavicon(app);

  app.get(STYLESHEET_PATH, (req, res) => {
    req.routeTemplate = STYLESHEET_PATH;
    res.type('css').set('Cache-Control', 'no-cache').send(HIDDEN_CONTROLS_CSS);
  });

  app.get(LOGIN_PATH, ...pageCsp(false), (req, res) => {
    req.routeTemplate = LOGIN_PATH;
    res
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(loginPage({ next: afterSignIn(req.query.next) }));
  });

  app.post(LOGIN_PATH, ...pageCsp(false), form, async (req, res, next) => {
    req.routeTemplate = LOGIN_PATH;
    res.set('Cache-Control', 'no-store');
    if (!sameOrigin(req)) {
      res
        .status(403)
        .type('html')
        .send(loginPage({ error: 'This sign-in did not come from this site.' }));
      return;
    }
    const email = typeof req.body?.email === 'string' ? req.body.email.slice(0, 320) : '';
    const password = typeof req.body?.password === 'string' ? req.body.password.slice(0, 1024) : '';
    const totp = typeof req.body?.totp_code === 'string' && req.body.totp_code ? req.body.totp_code.slice(0, 64) : undefined;
    const goTo = afterSignIn(req.body?.next);
    try {
      const em = services.orm.em.fork() as EntityManager;
      const client = { ip: req.clientIp, userAgent: req.get('user-agent') ?? null };
      const result = await checkLogin(em, services.identity, 'user', { email, password, totp_code: totp }, client);
      if (result.kind === 'totp_required') {
        res
          .status(401)
          .type('html')
          .send(loginPage({ email, next: goTo, error: 'Enter the code from your authenticator app too.', askTotp: true }));
        return;
      }
      const { cookie } = await openDashboardSession(em, result.principalId, client, lifetimes);
      setSessionCookie(res, cookie, cookieRules);
      res.redirect(303, goTo);
    } catch (err) {
      if (err instanceof AppError && (err.status === 401 || err.status === 429)) {
        if (err.headers['Retry-After']) res.set('Retry-After', err.headers['Retry-After']);
        const message =
          err.status === 429 ? 'Too many attempts. Wait a few minutes and try again.' : 'Invalid email, password or code.';
        res
          .status(err.status)
          .type('html')
          .send(loginPage({ email, next: goTo, error: message }));
        return;
      }
      next(err);
    }
  });

  app.get('/admin/logout', async (req, res, next) => {
    req.routeTemplate = '/admin/logout';
    try {
      const caller = await cookieCaller(req, services, lifetimes);
      if (caller?.kind === 'user')
        await revokeSessions(services.orm.em.fork() as EntityManager, services.identity, [caller.sessionId], 'signed_out');
      setSessionCookie(res, null, cookieRules);
      res.redirect(303, LOGIN_PATH);
    } catch (err) {
      next(err);
    }
  });

  // The live events page: the back-office stream through a ticket bought with the dashboard cookie.
  const liveGuard = async (req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    try {
      const caller = await cookieCaller(req, services, lifetimes);
      const isPage = req.method === 'GET';
      if (!caller || caller.kind !== 'user') {
        if (isPage) res.redirect(303, signInFor(req));
        else res.status(401).json({ detail: 'Sign in at /admin/login', code: 'UNAUTHENTICATED' });
        return;
      }
      if (!caller.permissions.has('view_events')) {
        res.status(403).json({ detail: 'Missing permission view_events', code: 'FORBIDDEN' });
        return;
      }
      if (!isPage && !sameOrigin(req)) {
        res.status(403).json({ detail: 'A ticket must be asked for from this site', code: 'FORBIDDEN' });
        return;
      }
      req.dashboardCaller = caller;
      next();
    } catch (err) {
      next(err);
    }
  };
  app.get(LIVE_SCRIPT_PATH, (req, res) => {
    req.routeTemplate = LIVE_SCRIPT_PATH;
    res.type('js').set('Cache-Control', 'no-cache').send(LIVE_SCRIPT);
  });
  app.get(
    LIVE_PATH,
    ...pageCsp(true),
    (req, _res, next) => ((req.routeTemplate = LIVE_PATH), next()),
    liveGuard,
    (_req, res) => {
      res.type('html').send(livePage());
    },
  );
  app.post(
    `${LIVE_PATH}/ticket`,
    (req, _res, next) => ((req.routeTemplate = `${LIVE_PATH}/ticket`), next()),
    liveGuard,
    async (req, res, next) => {
      try {
        const caller = req.dashboardCaller!;
        if (caller.kind !== 'user') return;
        res.json(
          await services.identity.streamTickets.issue({
            type: 'user',
            sub: caller.userId,
            sid: caller.sessionId,
            dashboard: { permissions: [...caller.permissions] },
          }),
        );
      } catch (err) {
        next(err);
      }
    },
  );

  app.use(DASHBOARD_PATH, ...pageCsp(true), async (req: Request, res: Response, next: NextFunction) => {
    req.routeTemplate = DASHBOARD_PATH;
    res.set('Cache-Control', 'no-store');
    try {
      const caller = await cookieCaller(req, services, lifetimes);
      const isApi = req.path.startsWith('/api/');
      if (!caller || caller.kind !== 'user') {
        if (isApi) res.status(401).json({ detail: 'Sign in at /admin/login', code: 'UNAUTHENTICATED' });
        else res.redirect(303, signInFor(req));
        return;
      }
      if (!caller.permissions.has('view_queues')) {
        res.status(403).json({ detail: 'Missing permission view_queues', code: 'FORBIDDEN' });
        return;
      }
      const changes = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
      if (changes) {
        if (!caller.permissions.has('manage_queues')) {
          res.status(403).json({ detail: 'Missing permission manage_queues', code: 'FORBIDDEN' });
          return;
        }
        const change = allowedChange(req.method, req.path);
        if (!change) {
          res.status(403).json({
            detail: 'The queue dashboard only retries, promotes, cleans and removes jobs; it never adds a job or changes one',
            code: 'FORBIDDEN',
          });
          return;
        }
        if (!sameOrigin(req)) {
          res.status(403).json({ detail: 'A change must come from this site', code: 'FORBIDDEN' });
          return;
        }
        const state = change.failedJob && (await jobState(services, change.failedJob));
        if (state && state !== 'failed') {
          res.status(409).json({ detail: `The job is ${state}; only a failed job can be retried`, code: 'JOB_NOT_FAILED' });
          return;
        }
        const action = change.audit;
        const path = req.path;
        res.on('finish', () => {
          if (res.statusCode >= 400) return;
          const em = services.orm.em.fork() as EntityManager;
          recordAudit(em, caller, {
            action,
            entityType: 'queue',
            entityId: /\/api\/queues\/([^/]+)/.exec(path)?.[1] ?? null,
            after: { method: req.method, path: `${DASHBOARD_PATH}${path}` },
          });
          em.flush().catch((err: unknown) => services.logger.error({ err }, 'could not audit a queue dashboard action'));
        });
      }
      req.dashboardCaller = caller;
      if (!isApi && req.method === 'GET') adjustBoardPage(res);
      next();
    } catch (err) {
      next(err);
    }
  });
  app.use(DASHBOARD_PATH, board.getRouter());
}

/** The state of a job a dashboard request names; undefined when there is no such job (bull-board answers 404 then). */
async function jobState(services: AppServices, job: { queue: string; id: string }): Promise<string | undefined> {
  const queue = ALL_QUEUES.find((name) => name === job.queue);
  if (!queue) return undefined;
  return (await services.jobs.queue(queue).getJob(job.id))?.getState();
}

/** The staff caller of the dashboard cookie: a live dashboard session of an active user, or undefined. */
async function cookieCaller(
  req: Request,
  services: AppServices,
  lifetimes: DashboardLifetimes,
): Promise<StaffCaller | undefined> {
  const cookie = readCookie(req, COOKIE);
  if (!cookie) return undefined;
  return resolveDashboardSession(services.orm.em.fork() as EntityManager, cookie, lifetimes);
}
