import { z } from 'zod';

/**
 * Trading and money routes refuse unknown body fields: dropped
 * quietly, a mistyped `stop_loss` (for `sl`) would open the order without its stop. Their
 * bodies are `z.strictObject`, which answers 422 `extra_forbidden` at each unknown field
 * (see validation/zod-issues.ts). A route of that family with no fields of its own takes
 * this body, so a field sent to it is refused too: a `volume` sent to a close would
 * otherwise close the whole order while the client believes it closed a part.
 */
export const NoFields = z.strictObject({}).optional().describe('No fields: any field sent is refused (extra_forbidden)');
