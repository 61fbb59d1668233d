import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';
import { fieldError } from '../../platform/errors';

/**
 * Password policy, beyond the length each route sets: not a common password or one a
 * cracker guesses early (zxcvbn's estimate, score 3 of 4 at least, with the account's own
 * email and names counted as guessable), not the email's local part or a string containing
 * it, and not one character repeated. Returns a sentence saying why, or undefined.
 * The estimator is built on first use (its dictionaries take a moment to load).
 */
const MIN_SCORE = 3;
let estimator: ZxcvbnFactory | undefined;

function strength(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
    graphs: zxcvbnCommon.adjacencyGraphs,
    translations: zxcvbnEn.translations,
  });
  return estimator;
}

export function passwordProblem(password: string, account: { email: string; names?: string[] }): string | undefined {
  const lowered = password.toLowerCase();
  const local = account.email.split('@')[0]!.toLowerCase();
  if (/^(.)\1*$/su.test(password)) return 'The password must not be one character repeated';
  if (local.length >= 3 && lowered.includes(local)) return 'The password must not contain the email address';
  const result = strength().check(password, [account.email, local, ...(account.names ?? [])]);
  if (result.score >= MIN_SCORE) return undefined;
  const why = result.feedback.warning ?? 'It would be guessed too early by a password cracker.';
  return `The password is too easy to guess. ${why} ${result.feedback.suggestions.join(' ')}`.trim();
}

/** The policy as a 422 at `field` (body.password unless said otherwise). */
export function assertPasswordPolicy(password: string, account: { email: string; names?: string[] }, field = ['password']): void {
  const problem = passwordProblem(password, account);
  if (problem) throw fieldError('body', field, problem);
}
