import { z } from 'zod';

/** A boolean query parameter: true/false (also 1/0); anything else is 422 bool_parsing. */
export const queryBool = () =>
  z.string().transform((v, ctx) => {
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    ctx.addIssue({
      code: 'custom',
      message: 'Input should be a valid boolean, unable to interpret input',
      params: { type: 'bool_parsing' },
    });
    return z.NEVER;
  });
