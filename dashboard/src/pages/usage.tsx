// The organization's usage against its plan, and the project's sending over time: a line chart
// of each event type and stacked bars of the bounces by category, drawn as SVG (attributes and
// classes only: the CSP forbids style attributes), each with a table of its numbers.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorLine, messageOf, orgPath, pageHref, projectPath, when, type PageProps } from '../ui.tsx';

interface Volume {
  period: string;
  used: number;
  limit: number | null;
  remaining: number | null;
  resets_at: string;
}
interface UsageReport {
  plan: string;
  monthly_volume: Volume;
  daily_volume: Volume;
  domains: { used: number; limit: number | null };
}
type Counts = Record<'queued' | 'simulated' | Exclude<Series, 'accepted'>, number> & {
  bounced_by_category: Record<string, number>;
};
interface Stats {
  granularity: 'day' | 'hour';
  totals: Counts;
  buckets: (Counts & { start: string })[];
}

type Series = 'accepted' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked';
const SERIES: readonly { key: Series; label: string }[] = [
  { key: 'accepted', label: 'Accepted' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'bounced', label: 'Bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
];
/** A series' count in a bucket: an accepted email is queued (LIVE) or simulated (TEST). */
const countOf = (c: Counts, s: Series) => (s === 'accepted' ? c.queued + c.simulated : c[s]);

const DAY_MS = 86_400_000;
/** The ranges offered, as the stats API's query; `today` is the server's (the usage report's day). */
const RANGES: Record<string, { label: string; query: (today: string) => string }> = {
  '24h': { label: 'Last 24 hours, by hour', query: () => 'granularity=hour' },
  '7d': { label: 'Last 7 days, by day', query: () => 'granularity=day' },
  '30d': {
    label: 'Last 30 days, by day',
    query: (today) => `granularity=day&from=${new Date(Date.parse(today) - 29 * DAY_MS).toISOString().slice(0, 10)}`,
  },
};

/** The chart's drawing box, in SVG user units (it scales to the page's width). */
const W = 640;
const H = 200;
const PAD = { left: 40, right: 8, top: 12, bottom: 24 };

export function Usage({ org, project, query }: PageProps) {
  const range = RANGES[query.get('range') ?? ''] ? query.get('range')! : '7d';
  const [usage, setUsage] = useState<UsageReport>();
  const [stats, setStats] = useState<Stats>();
  const [error, setError] = useState<string>();
  useEffect(() => void api<UsageReport>('GET', `${orgPath({ org })}/usage`).then(setUsage, fail), [org]);
  useEffect(() => {
    if (!usage) return;
    const q = RANGES[range]!.query(usage.daily_volume.period);
    void api<Stats>('GET', `${projectPath({ org, project })}/stats?${q}`).then(setStats, fail);
  }, [usage, org, project, range]);
  function fail(e: unknown) {
    setError(messageOf(e));
  }
  const pick = (value: string) =>
    (location.hash = pageHref(org, project, 'usage', new URLSearchParams({ range: value })));
  return (
    <main>
      <h1>Usage</h1>
      <ErrorLine error={error} />
      {usage && <Plan usage={usage} />}
      <h2>Sending over time</h2>
      <label class="range">
        Range
        <select value={range} onChange={(e) => pick(e.currentTarget.value)}>
          {Object.entries(RANGES).map(([value, r]) => (
            <option value={value}>{r.label}</option>
          ))}
        </select>
      </label>
      {stats && <Activity stats={stats} />}
    </main>
  );
}

/** This month's and today's recipients and the domains, each against the plan's ceiling. */
function Plan({ usage }: { usage: UsageReport }) {
  const row = (label: string, used: number, limit: number | null, resets?: string) => (
    <>
      <dt>{label}</dt>
      <dd>
        {limit === null
          ? `${used.toLocaleString('en')} (no limit)`
          : `${used.toLocaleString('en')} of ${limit.toLocaleString('en')}`}
        {limit !== null && <meter aria-label={label} min={0} max={limit} value={used} high={limit * 0.9} />}
        {resets && <span class="resets"> starts again {when(resets)} UTC</span>}
      </dd>
    </>
  );
  const m = usage.monthly_volume;
  const d = usage.daily_volume;
  return (
    <section aria-labelledby="usage-plan">
      <h2 id="usage-plan">This month and today</h2>
      <dl class="fields usage">
        <dt>Plan</dt>
        <dd>{usage.plan}</dd>
        {row(`Recipients in ${m.period}`, m.used, m.limit, m.resets_at)}
        {row(`Recipients on ${d.period}`, d.used, d.limit, d.resets_at)}
        {row('Domains', usage.domains.used, usage.domains.limit)}
      </dl>
    </section>
  );
}

/** A bucket's label: its day, or its day and hour (UTC). */
const labelOf = (start: string, granularity: Stats['granularity']) =>
  granularity === 'day' ? start.slice(0, 10) : when(start).slice(0, 16);

function Activity({ stats }: { stats: Stats }) {
  const unit = stats.granularity === 'day' ? 'day' : 'hour';
  const categories = Object.keys(stats.totals.bounced_by_category).sort();
  return (
    <>
      <section aria-labelledby="usage-events">
        <h3 id="usage-events">Events per {unit}</h3>
        <LineChart stats={stats} />
        <Legend items={SERIES.map((s, i) => ({ label: s.label, n: countOf(stats.totals, s.key), tone: i }))} />
        <div class="scroll">
          <table class="numbers">
            <caption>Events per {unit} (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">{unit === 'day' ? 'Day' : 'Hour'}</th>
                {SERIES.map((s) => (
                  <th scope="col">{s.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {stats.buckets.map((b) => (
                <tr>
                  <th scope="row">{labelOf(b.start, stats.granularity)}</th>
                  {SERIES.map((s) => (
                    <td>{countOf(b, s.key)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                {SERIES.map((s) => (
                  <td>{countOf(stats.totals, s.key)}</td>
                ))}
              </tr>
            </tfoot>
          </table>
        </div>
      </section>
      <section aria-labelledby="usage-bounces">
        <h3 id="usage-bounces">Bounces by category</h3>
        {categories.length === 0 ? (
          <p>No bounce in this range.</p>
        ) : (
          <>
            <BounceBars stats={stats} categories={categories} />
            <Legend
              items={categories.map((c, i) => ({ label: c, n: stats.totals.bounced_by_category[c] ?? 0, tone: i }))}
            />
          </>
        )}
      </section>
    </>
  );
}

/** The chart's scales: bucket i to x, a count to y, over [0, the largest count]. */
function scales(buckets: number, max: number) {
  const width = W - PAD.left - PAD.right;
  const height = H - PAD.top - PAD.bottom;
  const step = width / Math.max(buckets, 1);
  return {
    step,
    x: (i: number) => PAD.left + step * (i + 0.5),
    y: (n: number) => PAD.top + height - (max ? (n / max) * height : 0),
  };
}

/** The frame every chart shares: the axis line, 0 and the largest count, the first and last buckets. */
function Frame({ stats, max }: { stats: Stats; max: number }) {
  const first = stats.buckets[0];
  const last = stats.buckets.at(-1);
  return (
    <g class="axis">
      <line x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
      <text x={PAD.left - 4} y={H - PAD.bottom} text-anchor="end">
        0
      </text>
      <text x={PAD.left - 4} y={PAD.top + 4} text-anchor="end">
        {max}
      </text>
      {first && (
        <text x={PAD.left} y={H - 6}>
          {labelOf(first.start, stats.granularity)}
        </text>
      )}
      {last && last !== first && (
        <text x={W - PAD.right} y={H - 6} text-anchor="end">
          {labelOf(last.start, stats.granularity)}
        </text>
      )}
    </g>
  );
}

/** One line per series over the buckets, a point per bucket with its number as a tooltip. */
function LineChart({ stats }: { stats: Stats }) {
  const max = Math.max(0, ...stats.buckets.flatMap((b) => SERIES.map((s) => countOf(b, s.key))));
  const { x, y } = scales(stats.buckets.length, max);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`${summary(stats)} The table below gives every number.`}
    >
      <Frame stats={stats} max={max} />
      {SERIES.map((s, i) => (
        <g class={`tone-${i}`}>
          <polyline fill="none" points={stats.buckets.map((b, j) => `${x(j)},${y(countOf(b, s.key))}`).join(' ')} />
          {stats.buckets.map((b, j) => (
            <circle cx={x(j)} cy={y(countOf(b, s.key))} r="2.5">
              <title>{`${labelOf(b.start, stats.granularity)}: ${countOf(b, s.key)} ${s.label.toLowerCase()}`}</title>
            </circle>
          ))}
        </g>
      ))}
    </svg>
  );
}

/** A bar per bucket, stacked by bounce category. */
function BounceBars({ stats, categories }: { stats: Stats; categories: string[] }) {
  const max = Math.max(0, ...stats.buckets.map((b) => b.bounced));
  const { step, x, y } = scales(stats.buckets.length, max);
  const label = `Bounces by category: ${categories.map((c) => `${c} ${stats.totals.bounced_by_category[c]}`).join(', ')}.`;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label}>
      <Frame stats={stats} max={max} />
      {stats.buckets.map((b, j) => {
        let below = 0;
        return categories.map((c, i) => {
          const n = b.bounced_by_category[c] ?? 0;
          if (!n) return null;
          const top = y(below + n);
          const bar = (
            <rect class={`tone-${i}`} x={x(j) - step * 0.4} y={top} width={step * 0.8} height={y(below) - top}>
              <title>{`${labelOf(b.start, stats.granularity)}: ${n} ${c}`}</title>
            </rect>
          );
          below += n;
          return bar;
        });
      })}
    </svg>
  );
}

/** What a chart's colours mean, with each one's total over the range. */
function Legend({ items }: { items: { label: string; n: number; tone: number }[] }) {
  return (
    <ul class="legend">
      {items.map((it) => (
        <li>
          <span class={`swatch tone-${it.tone}`} aria-hidden="true" />
          {it.label}: {it.n}
        </li>
      ))}
    </ul>
  );
}

/** The chart's totals in words, for a screen reader. */
const summary = (stats: Stats) =>
  `Events per ${stats.granularity}, totals: ${SERIES.map((s) => `${s.label.toLowerCase()} ${countOf(stats.totals, s.key)}`).join(', ')}.`;
