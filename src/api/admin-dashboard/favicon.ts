import type { Express } from 'express';

/**
 * The icon of the service's own pages (sign-in, live events, the API reference): a candlestick
 * on the dashboard's dark ground, drawn as SVG so one small file serves every size. A browser
 * asks /favicon.ico of any page that names none, so that address serves it too, with its type.
 */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#151a21"/>
<path d="M11 5v22M21 8v19" stroke="#9aa4b2" stroke-width="2"/>
<rect x="7" y="10" width="8" height="11" rx="1" fill="#22c55e"/>
<rect x="17" y="13" width="8" height="9" rx="1" fill="#ef4444"/>
</svg>
`;

export function mountFavicon(app: Express): void {
  for (const path of ['/favicon.svg', '/favicon.ico'])
    app.get(path, (req, res) => {
      req.routeTemplate = path;
      res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG);
    });
}
