import { createElement as h, useEffect, useState, type ReactElement } from 'react';
import { Box, Text, render, useApp, useInput } from 'ink';
import { countsText, cut } from '../top/format.ts';
import type { TopReader } from '../top/repo.ts';

/** What the view reads: the snapshot and an email's events (src/top/repo.ts). */
export type TopSource = Pick<TopReader, 'snapshot' | 'events'>;

const counts = (c: Record<string, number>) => countsText(c, '  ', '—');
const BARS = '▁▂▃▄▅▆▇█';
/** A sparkline of `values`, scaled to their maximum (a flat line when all are 0). */
export const sparkline = (values: number[]): string => {
  const max = Math.max(...values, 0);
  return values.map((v) => (max === 0 ? BARS[0] : BARS[Math.min(7, Math.floor((v / max) * 7.999))])).join('');
};
const perSecond = (values: number[]) => `${values.at(-2) ?? 0}/s`;

function Top({ source, refreshMs }: { source: TopSource; refreshMs: number }): ReactElement {
  const { exit } = useApp();
  const [snap, setSnap] = useState(() => source.snapshot());
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    const timer = setInterval(() => setSnap(source.snapshot()), refreshMs);
    return () => clearInterval(timer);
  }, [source, refreshMs]);
  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) exit();
    else if (key.escape) setOpen(null);
    else if (key.upArrow) setSelected((s) => Math.max(0, s - 1));
    else if (key.downArrow) setSelected((s) => Math.min(Math.max(0, snap.latest.length - 1), s + 1));
    else if (key.return) setOpen(snap.latest[selected]?.id ?? null);
  });
  const width = process.stdout.columns || 80;
  const header = h(Text, { bold: true }, `svc top — ${snap.at.slice(0, 19).replace('T', ' ')} UTC`);
  const stats = h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    h(Text, null, `last minute    ${counts(snap.last_minute)}`),
    h(Text, null, `this hour      ${counts(snap.this_hour)}`),
    h(Text, null, `accepted  ${sparkline(snap.per_second.accepted)} ${perSecond(snap.per_second.accepted)}`),
    h(Text, null, `delivered ${sparkline(snap.per_second.delivered)} ${perSecond(snap.per_second.delivered)}`),
    h(Text, null, `bounced   ${sparkline(snap.per_second.bounced)} ${perSecond(snap.per_second.bounced)}`),
    h(Text, null, `queue          ${snap.queue.recipients} waiting, oldest ${snap.queue.oldest_seconds} s`),
    h(
      Text,
      null,
      `webhooks       ${snap.webhooks.pending_events} pending, ${snap.webhooks.auto_disabled.length} switched off`,
    ),
  );
  const destinations = h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    h(Text, { bold: true }, 'waiting by destination'),
    ...(snap.waiting_by_destination.length
      ? snap.waiting_by_destination
          .slice(0, 5)
          .map((w) =>
            h(
              Text,
              { key: w.domain, ...(w.throttled ? { color: 'yellow' } : {}) },
              `  ${cut(w.domain, 40)}  ${w.recipients}${w.throttled ? `  throttled to ${w.concurrency}` : ''}`,
            ),
          )
      : [h(Text, { key: 'none', dimColor: true }, '  none')]),
  );
  const latest = h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    h(Text, { bold: true }, 'latest emails'),
    ...snap.latest.map((e, i) =>
      h(
        Text,
        { key: e.id, inverse: i === selected },
        `${i === selected ? '>' : ' '} ${e.created_at.slice(11, 19)} ${e.status.padEnd(10)} ${cut(e.to.join(','), 26).padEnd(26)} ${cut(e.subject, Math.max(10, width - 52))}`,
      ),
    ),
  );
  const detail =
    open &&
    h(
      Box,
      { flexDirection: 'column', marginTop: 1, borderStyle: 'single', paddingX: 1 },
      h(Text, { bold: true }, `events of ${open}`),
      ...source
        .events(open)
        .map((ev, i) =>
          h(
            Text,
            { key: String(i) },
            `${ev.at.slice(11, 19)} ${ev.type.padEnd(14)} ${cut(`${ev.recipient ?? ''} ${ev.detail}`.trim(), Math.max(10, width - 30))}`,
          ),
        ),
    );
  const footer = h(Text, { dimColor: true }, open ? 'Esc back · q quit' : '↑↓ select · Enter events · q quit');
  return h(
    Box,
    { flexDirection: 'column' },
    header,
    stats,
    destinations,
    latest,
    detail,
    h(Box, { marginTop: 1 }, footer),
  );
}

/** The live view of `svc top`: refreshes every `refreshMs` until q or Ctrl-C; the terminal is restored on exit. */
export async function runTop(source: TopSource, refreshMs = 1000): Promise<void> {
  // svc top starts this only when stdin and stdout are terminals: a live view then, even
  // when the environment says CI (Ink would otherwise print only the last frame, at exit).
  const app = render(h(Top, { source, refreshMs }), { exitOnCtrlC: false, interactive: true });
  await app.waitUntilExit();
}
