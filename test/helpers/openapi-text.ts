import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../../src/api/openapi/openapi-document';
import { ROUTES } from '../../src/api/routes';

/**
 * Writes the text the service serves at GET /openapi.json to the file named by its argument.
 * The global setup runs it once per test run, and every in-process app with the shipped route
 * table serves that text instead of building the document from the zod schemas again.
 */
writeFileSync(process.argv[2]!, JSON.stringify(buildOpenApiDocument(ROUTES)));
