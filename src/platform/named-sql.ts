/**
 * A statement written with named parameters (`:ticket`, `:closed_at`), compiled once into
 * the positional form drivers take. Binding orders the values from one object, so nobody
 * keeps a list of `?` in step with a list of values by hand; a name used twice is bound
 * twice. `::type` casts are not parameters, and neither is a `:word` inside a string
 * literal, a quoted identifier, a dollar-quoted body or a comment (see sql-scanner).
 */
import { rewriteSqlCode } from './sql-scanner';

export interface Statement {
  /** With `?` placeholders, as MikroORM's `em.execute` takes them. */
  sql: string;
  values: unknown[];
}

export interface NamedStatement<P> {
  /** The parameter names in placeholder order. */
  readonly names: readonly (keyof P & string)[];
  bind(params: P): Statement;
}

const PARAMETER = /(?<!:):([a-z_][a-z0-9_]*)/gi;

export function namedStatement<P extends object>(text: string): NamedStatement<P> {
  const names: (keyof P & string)[] = [];
  const sql = rewriteSqlCode(text, (code) =>
    code.replace(PARAMETER, (_match, name: string) => {
      names.push(name as keyof P & string);
      return '?';
    }),
  );
  return {
    names,
    bind(params: P): Statement {
      const values = names.map((name) => {
        const value = params[name];
        // A missing name is a bug in the caller, never a NULL to write.
        if (value === undefined) throw new Error(`no value for :${name}`);
        return value;
      });
      return { sql, values };
    },
  };
}

const numbered = new Map<string, string>();

/** The same statement with `pg`'s `$1, $2, …` placeholders, as executeBound and the bench baselines send it. */
export function pgPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = rewriteSqlCode(sql, (code) => code.replace(/\?/g, () => `$${++n}`));
    numbered.set(sql, text);
  }
  return text;
}
