import { scopeParams } from '../../platform/customer-scope';
import type { Column, ReportDocument } from './report-document';
import { dayAfter, dayStart, type PartnerReportParams } from './report-params';
import type { SourceContext } from './source-context';
import { IB_ACQUISITION, IB_REWARDS } from './reports.queries';

const col = (key: string, label: string, type: Column['type']): Column => ({ key, label, type });

export const IB_REWARDS_COLUMNS: Column[] = [
  col('partner_id', 'Partner', 'text'),
  col('code', 'Code', 'text'),
  col('level', 'Level', 'integer'),
  col('currency', 'Currency', 'text'),
  col('orders', 'Orders', 'integer'),
  col('lots', 'Lots', 'number'),
  col('paid', 'Paid', 'money'),
  col('pending', 'Pending (daily)', 'money'),
  col('on_hold', 'On hold', 'money'),
  col('reversed', 'Reversed', 'money'),
  col('excluded', 'Excluded (count)', 'integer'),
];

export const IB_ACQUISITION_COLUMNS: Column[] = [
  col('partner_id', 'Partner', 'text'),
  col('code', 'Code', 'text'),
  col('level', 'Level', 'integer'),
  col('registrations', 'Registrations', 'integer'),
  col('ftds', 'First deposits', 'integer'),
  col('volume', 'Volume (lots)', 'number'),
];

const span = (p: PartnerReportParams) =>
  `${p.from} to ${p.to} inclusive${p.partner_id ? `, partner ${p.partner_id} and the levels below it` : ''}`;

const head = (type: string, p: PartnerReportParams) => ({
  head: { type, from: p.from, to: p.to, partner_id: p.partner_id ?? null },
  headTypes: { type: 'text', from: 'date', to: 'date', partner_id: 'text' } as const,
});

/** Introducing brokers' rewards per partner and level, of the orders closed in the period. */
export function ibRewardsDocument(params: PartnerReportParams, ctx: SourceContext): ReportDocument {
  const bound = IB_REWARDS.bind({
    start: dayStart(params.from),
    until: dayAfter(params.to),
    partner_id: params.partner_id ?? null,
    ...scopeParams(ctx.scope),
  });
  return {
    fileName: `ib-rewards-${params.from}-${params.to}`,
    title: 'Partner rewards',
    subtitle: [
      `Rewards of the orders closed ${span(params)}, per partner and level (1 is the partner nearest the client), by state.`,
      `Times in UTC. Built ${ctx.now.toISOString()}.`,
    ],
    ...head('ib_rewards', params),
    summary: [],
    sections: [
      { key: 'rewards', title: 'Per partner and level', columns: IB_REWARDS_COLUMNS, rows: () => ctx.reader.stream(bound) },
    ],
  };
}

/** What partners brought in: registrations, first deposits and closed volume, per partner and level. */
export function ibAcquisitionDocument(params: PartnerReportParams, ctx: SourceContext): ReportDocument {
  const bound = IB_ACQUISITION.bind({
    start: dayStart(params.from),
    until: dayAfter(params.to),
    partner_id: params.partner_id ?? null,
    ...scopeParams(ctx.scope),
  });
  return {
    fileName: `ib-acquisition-${params.from}-${params.to}`,
    title: 'Partner acquisition',
    subtitle: [
      `Clients registered, first deposits and lots closed ${span(params)}, per partner and level ` +
        '(1: its own clients; 2: the clients of the partners directly below it; ...).',
      `Times in UTC. Built ${ctx.now.toISOString()}.`,
    ],
    ...head('ib_acquisition', params),
    summary: [],
    sections: [
      { key: 'partners', title: 'Per partner and level', columns: IB_ACQUISITION_COLUMNS, rows: () => ctx.reader.stream(bound) },
    ],
  };
}
