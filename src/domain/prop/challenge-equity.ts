import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import { dec, type Dec } from '../../platform/decimal';
import { metricsOf, type OpenPosition } from '../accounts/account-metrics';
import { PricingContext } from '../prices/pricing-context';
import { PricingTermsCache } from '../prices/pricing-terms';
import type { QuoteStore } from '../prices/quote-store';
import type { LossRuleInput, PassRuleInput } from './challenge-rules';

/** An active challenge with its account's balance and open orders, as prop.queries' rule statements read it. */
export interface ChallengeRow extends LossRuleInput, PassRuleInput {
  challenge_id: string;
  account_id: string;
  customer_id: string;
  login: string;
  phase: number;
  balance: string;
  currency: string;
  group_id: string | null;
  ends_at: Date | string | null;
  open: Array<{ symbol: string; cmd: 0 | 1; volume: string; openPrice: string; contractSize: string }>;
}

/** How long an evaluation reuses the pricing terms of a group, currency and set of symbols. */
const TERMS_TTL_MS = 5_000;
const termsCache = new PricingTermsCache(TERMS_TTL_MS);

/**
 * The equity of each row's account at the latest quotes, in the account currency, priced set by
 * set: the accounts of one group and currency share one pricing (one read of the quotes, one
 * converter) for all the symbols they hold, so a tick that moves a thousand challenge accounts
 * reads its quotes a handful of times, not a thousand. Equity is computed as the account views
 * and the margin check compute it (metricsOf).
 */
export async function equitiesOf(em: EntityManager, quotes: QuoteStore, rows: ChallengeRow[]): Promise<Map<string, Dec>> {
  const out = new Map<string, Dec>();
  const sets = new Map<string, ChallengeRow[]>();
  for (const row of rows) {
    if (row.open.length === 0) {
      out.set(row.account_id, dec(row.balance));
      continue;
    }
    const key = `${row.group_id ?? ''}:${row.currency}`;
    const set = sets.get(key);
    if (set) set.push(row);
    else sets.set(key, [row]);
  }
  for (const set of sets.values()) {
    const symbols = [...new Set(set.flatMap((r) => r.open.map((o) => o.symbol)))].sort();
    const { group_id: groupId, currency } = set[0]!;
    const terms = await termsCache.get(em, { currency, groupId }, symbols);
    // Pricing reads only the currency of the account it is loaded for (and metricsOf its balance).
    const pricingAccount = { currency, balance: '0' } as Account;
    const pricing = await PricingContext.load(em, quotes, pricingAccount, symbols, terms);
    for (const row of set) {
      const account = { currency, balance: row.balance } as Account;
      const open: OpenPosition[] = row.open.map((o) => ({ ...o, cmd: Number(o.cmd) as 0 | 1 }));
      out.set(row.account_id, metricsOf(account, open, pricing, 1).equity);
    }
  }
  return out;
}
