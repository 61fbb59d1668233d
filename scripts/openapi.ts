/**
 * Writes the OpenAPI document the service serves at GET /openapi.json to
 * generated/openapi.json, built from the route table without starting anything:
 *   npm run openapi   (then Redocly lints it and openapi-typescript turns it into
 *                      generated/api.d.ts, the typed client the contract test compiles against)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/api/openapi/openapi-document';
import { ROUTES } from '../src/api/routes';

const out = join(__dirname, '..', 'generated');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'openapi.json'), `${JSON.stringify(buildOpenApiDocument(ROUTES), null, 2)}\n`);
console.log(`wrote ${join('generated', 'openapi.json')} (${ROUTES.length} operations)`);
