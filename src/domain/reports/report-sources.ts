import { scopeParams } from '../../platform/customer-scope';
import { Account } from '../../entities/account.entity';
import type { ReportType } from '../../entities/report.entity';
import { D, dec, money, type Dec } from '../../platform/decimal';
import { PermanentJobFailure } from '../../platform/errors';
import { CurrencyConverter } from '../prices/conversion';
import { PricingContext, PricingError } from '../prices/pricing-context';
import { closingPrice, profitInQuoteCurrency } from '../prices/trading-math';
import { DAILY_COLUMNS, dailyDocument } from './daily-report';
import { IB_ACQUISITION_COLUMNS, IB_REWARDS_COLUMNS, ibAcquisitionDocument, ibRewardsDocument } from './partner-reports';
import type { Statement } from '../../platform/named-sql';
import type { Column, ReportDocument, Row, Section } from './report-document';
import { statementTexts, type StatementTexts } from './report-texts';
import type { SourceContext } from './source-context';
import {
  dayAfter,
  dayStart,
  REPORT_PARAMS,
  type DepositsWithdrawalsParams,
  type PromotionsParams,
  type PartnerReportParams,
  type ExposureParams,
  type StatementParams,
  type TradesParams,
} from './report-params';
import {
  DEPOSITS_WITHDRAWALS,
  PROMOTIONS,
  EXPOSURE,
  STATEMENT_BALANCES,
  STATEMENT_CLOSED_ORDERS,
  STATEMENT_LEDGER,
  STATEMENT_OPEN_ORDERS,
  TRADES,
} from './reports.queries';

const col = (key: string, label: string, type: Column['type']): Column => ({ key, label, type });

const LEDGER_COLUMNS: Column[] = [
  col('seq', 'Seq', 'integer'),
  col('time', 'Time', 'time'),
  col('kind', 'Kind', 'text'),
  col('amount', 'Amount', 'money'),
  col('balance_after', 'Balance after', 'money'),
  col('reference_type', 'Reference', 'text'),
  col('reference_id', 'Reference id', 'text'),
];

/** An order's side: `cmd` (0 buy, 1 sell) in CSV and JSON, the word in the reader's language in the PDF. */
const side = (texts: StatementTexts): Column => ({
  ...col('cmd', texts.side, 'integer'),
  words: { '0': texts.buy, '1': texts.sell },
});

const orderOpening = (texts: StatementTexts): Column[] => [
  col('ticket', 'Ticket', 'integer'),
  col('symbol', 'Symbol', 'text'),
  side(texts),
  col('volume', 'Volume', 'number'),
  col('open_time', 'Open time', 'time'),
  col('open_price', 'Open price', 'number'),
];
const CHARGES: Column[] = [col('commission', 'Commission', 'money'), col('swap', 'Swap', 'money')];

const closedOrderColumns = (texts: StatementTexts): Column[] => [
  ...orderOpening(texts),
  col('close_time', 'Close time', 'time'),
  col('close_price', 'Close price', 'number'),
  col('profit', 'Profit', 'money'),
  ...CHARGES,
];
export const CLOSED_ORDER_COLUMNS = closedOrderColumns(statementTexts('en'));

const openOrderColumns = (texts: StatementTexts): Column[] => [
  ...orderOpening(texts),
  col('current_price', 'Current price', 'number'),
  col('floating_profit', 'Floating profit', 'money'),
  ...CHARGES,
];

export const TRADE_COLUMNS: Column[] = [
  col('login', 'Login', 'integer'),
  ...CLOSED_ORDER_COLUMNS,
  col('comment', 'Comment', 'text'),
];

const EXPOSURE_COLUMNS: Column[] = [
  col('symbol', 'Symbol', 'text'),
  col('long_volume', 'Long volume', 'number'),
  col('short_volume', 'Short volume', 'number'),
  col('net_volume', 'Net volume', 'number'),
  col('net_notional', 'Net notional', 'money'),
  col('currency', 'Currency', 'text'),
  col('open_orders', 'Open orders', 'integer'),
  col('floating_profit', 'Clients floating profit', 'money'),
];

const PROMOTIONS_COLUMNS: Column[] = [
  col('code', 'Code', 'text'),
  col('campaign_id', 'Campaign', 'text'),
  col('currency', 'Currency', 'text'),
  col('redemptions', 'Redemptions', 'integer'),
  col('granted', 'Bonus granted', 'money'),
  col('released', 'Released', 'money'),
  col('forfeited', 'Forfeited', 'money'),
  col('net_cost', 'Net cost', 'money'),
];

const DEPOSITS_WITHDRAWALS_COLUMNS: Column[] = [
  col('currency', 'Currency', 'text'),
  col('day', 'Day', 'date'),
  col('deposits', 'Deposits', 'money'),
  col('deposit_count', 'Deposits (count)', 'integer'),
  col('withdrawals', 'Withdrawals', 'money'),
  col('withdrawal_count', 'Withdrawals (count)', 'integer'),
  col('net', 'Net', 'money'),
];

/**
 * The sections and columns of each report type, as its document lays them out: what the CSV
 * writer's tests walk, so a text column added to any report is fed hostile values too.
 */
export const REPORT_SECTIONS: Record<ReportType, Array<{ key: string; columns: Column[] }>> = {
  account_statement: [
    { key: 'ledger', columns: LEDGER_COLUMNS },
    { key: 'closed_orders', columns: CLOSED_ORDER_COLUMNS },
    { key: 'open_orders', columns: openOrderColumns(statementTexts('en')) },
  ],
  trades: [{ key: 'orders', columns: TRADE_COLUMNS }],
  exposure: [{ key: 'symbols', columns: EXPOSURE_COLUMNS }],
  deposits_withdrawals: [{ key: 'days', columns: DEPOSITS_WITHDRAWALS_COLUMNS }],
  daily: [{ key: 'snapshots', columns: DAILY_COLUMNS }],
  promotions: [{ key: 'codes', columns: PROMOTIONS_COLUMNS }],
  ib_rewards: [{ key: 'rewards', columns: IB_REWARDS_COLUMNS }],
  ib_acquisition: [{ key: 'partners', columns: IB_ACQUISITION_COLUMNS }],
};

const fromArray = (rows: Row[]) => () =>
  (async function* () {
    yield* rows;
  })();

/** A section's rows straight from one statement: streamed for JSON and PDF, written by Postgres for CSV. */
const readFrom = (ctx: SourceContext, statement: Statement): Pick<Section, 'rows' | 'statement'> => ({
  rows: () => ctx.reader.stream(statement),
  statement,
});

const built = (now: Date) => `Times in UTC. Built ${now.toISOString()}.`;

/** The document of a report: its figures read in the reader's snapshot, its rows read as it is written. */
export async function documentFor(type: ReportType, rawParams: unknown, ctx: SourceContext): Promise<ReportDocument> {
  const parsed = REPORT_PARAMS[type].safeParse(rawParams);
  if (!parsed.success) throw new PermanentJobFailure(`The report's params no longer parse: ${parsed.error.message}`);
  switch (type) {
    case 'account_statement':
      return statementDocument(parsed.data as StatementParams, ctx);
    case 'trades':
      return tradesDocument(parsed.data as TradesParams, ctx);
    case 'exposure':
      return exposureDocument(parsed.data as ExposureParams, ctx);
    case 'deposits_withdrawals':
      return depositsWithdrawalsDocument(parsed.data as DepositsWithdrawalsParams, ctx);
    case 'daily':
      return dailyDocument(parsed.data as { trading_date: string }, ctx);
    case 'promotions':
      return promotionsDocument(parsed.data as PromotionsParams, ctx);
    case 'ib_rewards':
      return ibRewardsDocument(parsed.data as PartnerReportParams, ctx);
    case 'ib_acquisition':
      return ibAcquisitionDocument(parsed.data as PartnerReportParams, ctx);
  }
}

/**
 * A statement: the opening balance (the ledger's sum before the period), every ledger row of
 * the period, the closing balance (the ledger's sum at its end), so opening plus the rows is
 * the closing balance by construction, all in one snapshot. Orders open at the end are valued
 * at the quotes when the statement is built (an order since closed shows no floating profit):
 * quotes of the past are not kept; the daily report holds each day's equity.
 */
async function statementDocument(params: StatementParams, ctx: SourceContext): Promise<ReportDocument> {
  const account = await ctx.em.findOne(Account, { login: String(params.login) }, { populate: ['group', 'customer'] });
  if (!account) throw new PermanentJobFailure(`Account ${params.login} not found`);
  const range = { account_id: account.id, start: dayStart(params.from), until: dayAfter(params.to) };
  const balances = (await ctx.reader.one<{ opening: string; closing: string }>(STATEMENT_BALANCES.bind(range)))!;
  const open = await ctx.reader.all<Row & { status: string; contract_size: string }>(
    STATEMENT_OPEN_ORDERS.bind({ account_id: account.id, until: range.until }),
  );
  const stillOpen = open.filter((o) => o.status === 'open');
  const pricing = stillOpen.length
    ? await PricingContext.load(
        ctx.em,
        ctx.quotes,
        account,
        stillOpen.map((o) => String(o.symbol)),
      )
    : undefined;
  let floatingTotal = new D(0);
  const openRows = open.map((o) => {
    let current: string | null = null;
    let floating: string | null = null;
    const quote = o.status === 'open' ? pricing?.quoteOrNull(String(o.symbol)) : null;
    if (quote) {
      const price = closingPrice(Number(o.cmd), quote);
      current = price.toFixed();
      const inQuote = profitInQuoteCurrency(
        Number(o.cmd),
        dec(String(o.open_price)),
        price,
        dec(String(o.volume)),
        dec(o.contract_size),
      );
      try {
        const value = money(pricing!.toAccountCurrency(inQuote, quote.instrument.quoteCurrency));
        floating = value.toFixed(2);
        floatingTotal = floatingTotal.plus(value);
      } catch (err) {
        if (!(err instanceof PricingError)) throw err;
      }
    }
    return { ...o, current_price: current, floating_profit: floating };
  });
  const equity = money(dec(balances.closing).plus(floatingTotal)).toFixed(2);
  const holder = account.customer.getEntity();
  const texts = statementTexts(holder.locale);
  return {
    fileName: `statement-${account.login}-${params.from}-${params.to}`,
    title: 'Account statement',
    subtitle: [
      `${texts.holder}: ${holder.firstName} ${holder.lastName}`,
      `Account ${account.login} (${account.currency}), ${params.from} to ${params.to} inclusive.`,
      built(ctx.now),
    ],
    head: { login: account.login, currency: account.currency, from: params.from, to: params.to },
    headTypes: { login: 'integer', currency: 'text', from: 'date', to: 'date' },
    summary: [
      { key: 'opening_balance', label: 'Opening balance', type: 'money', value: balances.opening, csvColumn: 'balance_after' },
      { key: 'closing_balance', label: 'Closing balance', type: 'money', value: balances.closing, csvColumn: 'balance_after' },
      { key: 'equity', label: 'Equity', type: 'money', value: equity, csvColumn: 'balance_after' },
    ],
    sections: [
      { key: 'ledger', title: 'Ledger', columns: LEDGER_COLUMNS, ...readFrom(ctx, STATEMENT_LEDGER.bind(range)) },
      {
        key: 'closed_orders',
        title: 'Orders closed in the period',
        columns: closedOrderColumns(texts),
        ...readFrom(ctx, STATEMENT_CLOSED_ORDERS.bind(range)),
      },
      { key: 'open_orders', title: 'Orders open at the end', columns: openOrderColumns(texts), rows: fromArray(openRows) },
    ],
  };
}

function tradesDocument(params: TradesParams, ctx: SourceContext): ReportDocument {
  const bound = TRADES.bind({
    start: dayStart(params.from),
    until: dayAfter(params.to),
    login: params.login === undefined ? null : String(params.login),
    symbol: params.symbol ?? null,
    ...scopeParams(ctx.scope),
  });
  const filters = [params.login && `account ${params.login}`, params.symbol && `symbol ${params.symbol}`].filter(Boolean);
  return {
    fileName: `trades-${params.from}-${params.to}`,
    title: 'Trades',
    subtitle: [
      `Orders closed ${params.from} to ${params.to} inclusive${filters.length ? `, ${filters.join(', ')}` : ''}.`,
      built(ctx.now),
    ],
    head: { type: 'trades', from: params.from, to: params.to, login: params.login ?? null, symbol: params.symbol ?? null },
    headTypes: { type: 'text', from: 'date', to: 'date', login: 'integer', symbol: 'text' },
    summary: [],
    sections: [{ key: 'orders', title: 'Closed orders', columns: TRADE_COLUMNS, ...readFrom(ctx, bound) }],
  };
}

/**
 * Per symbol over the open orders: long and short volume, the net, its notional at the mid
 * price and the clients' floating profit (buys at bid, sells at ask; each group's spread left
 * aside), both converted into `currency` at the latest quotes. Without a quote or a
 * conversion path they are empty.
 */
async function exposureDocument(params: ExposureParams, ctx: SourceContext): Promise<ReportDocument> {
  const rows = await ctx.reader.all<Record<string, string | number | null>>(
    EXPOSURE.bind({ group_id: params.group_id ?? null, ...scopeParams(ctx.scope) }),
  );
  const symbols = rows.map((r) => String(r.symbol));
  const quoteCurrencies = rows.map((r) => r.quote_currency).filter((c): c is string => typeof c === 'string');
  const [quotes, converter] = await Promise.all([
    ctx.quotes.getMany(symbols),
    CurrencyConverter.joiningInstruments((s) => ctx.reader.all(s), [params.currency, ...quoteCurrencies]).then((joining) =>
      CurrencyConverter.priced(joining, ctx.quotes),
    ),
  ]);
  const out = rows.map((r) => {
    const quote = quotes.get(String(r.symbol));
    const rate = typeof r.quote_currency === 'string' ? converter.rate(r.quote_currency, params.currency)?.rate : undefined;
    let notional: Dec | null = null;
    let floating: Dec | null = null;
    if (quote && rate) {
      const bid = dec(quote.bid);
      const ask = dec(quote.ask);
      const longUnits = dec(String(r.long_units));
      const shortUnits = dec(String(r.short_units));
      notional = money(longUnits.minus(shortUnits).times(bid.plus(ask).div(2)).times(rate));
      floating = money(
        longUnits
          .times(bid)
          .minus(dec(String(r.long_cost)))
          .plus(dec(String(r.short_cost)).minus(shortUnits.times(ask)))
          .times(rate),
      );
    }
    return {
      symbol: r.symbol,
      long_volume: dec(String(r.long_volume)).toFixed(),
      short_volume: dec(String(r.short_volume)).toFixed(),
      net_volume: dec(String(r.long_volume))
        .minus(dec(String(r.short_volume)))
        .toFixed(),
      net_notional: notional?.toFixed(2) ?? null,
      currency: params.currency,
      open_orders: r.open_orders,
      floating_profit: floating?.toFixed(2) ?? null,
    };
  });
  return {
    fileName: `exposure-${ctx.now.toISOString().slice(0, 10)}`,
    title: 'Exposure by symbol',
    subtitle: [
      `Open orders${params.group_id ? ` of group ${params.group_id}` : ''}, amounts in ${params.currency} at the latest quotes.`,
      built(ctx.now),
    ],
    head: { type: 'exposure', currency: params.currency, group_id: params.group_id ?? null, generated_at: ctx.now },
    headTypes: { type: 'text', currency: 'text', group_id: 'text', generated_at: 'time' },
    summary: [],
    sections: [
      {
        key: 'symbols',
        title: 'Symbols',
        columns: EXPOSURE_COLUMNS,
        rows: fromArray(out),
      },
    ],
  };
}

function depositsWithdrawalsDocument(params: DepositsWithdrawalsParams, ctx: SourceContext): ReportDocument {
  const bound = DEPOSITS_WITHDRAWALS.bind({
    start: dayStart(params.from),
    until: dayAfter(params.to),
    group_id: params.group_id ?? null,
    ...scopeParams(ctx.scope),
  });
  return {
    fileName: `deposits-withdrawals-${params.from}-${params.to}`,
    title: 'Deposits and withdrawals',
    subtitle: [
      `Completed deposits and withdrawals per currency and day, ${params.from} to ${params.to} inclusive${params.group_id ? `, accounts of group ${params.group_id}` : ''}.`,
      built(ctx.now),
    ],
    head: { type: 'deposits_withdrawals', from: params.from, to: params.to, group_id: params.group_id ?? null },
    headTypes: { type: 'text', from: 'date', to: 'date', group_id: 'text' },
    summary: [],
    sections: [
      {
        key: 'days',
        title: 'Per currency and day',
        columns: DEPOSITS_WITHDRAWALS_COLUMNS,
        rows: () => ctx.reader.stream(bound),
      },
    ],
  };
}

function promotionsDocument(params: PromotionsParams, ctx: SourceContext): ReportDocument {
  const bound = PROMOTIONS.bind({
    start: dayStart(params.from),
    until: dayAfter(params.to),
    campaign_id: params.campaign_id ?? null,
  });
  return {
    fileName: `promotions-${params.from}-${params.to}`,
    title: 'Promotions',
    subtitle: [
      `Per promo code, ${params.from} to ${params.to} inclusive${params.campaign_id ? `, campaign ${params.campaign_id}` : ''}: ` +
        'redemptions, bonus granted, released to balance, forfeited, and the net cost (what became withdrawable).',
      built(ctx.now),
    ],
    head: { type: 'promotions', from: params.from, to: params.to, campaign_id: params.campaign_id ?? null },
    headTypes: { type: 'text', from: 'date', to: 'date', campaign_id: 'text' },
    summary: [],
    sections: [{ key: 'codes', title: 'Per code', columns: PROMOTIONS_COLUMNS, rows: () => ctx.reader.stream(bound) }],
  };
}
