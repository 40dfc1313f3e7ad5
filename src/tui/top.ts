import { createElement as h, useEffect, useRef, useState, type ReactElement } from 'react';
import { Box, Text, render, useApp, useInput } from 'ink';
import {
  clockOf,
  countsText,
  cut,
  destinationHead,
  destinationText,
  latestText,
  queueText,
  scopeText,
  webhooksText,
} from '../top/format.ts';
import { filterText, parseFilterText, type TopFilter } from '../top/filter.ts';
import type { EmailDetail, Snapshot } from '../top/index.ts';
import type { TopSource } from '../top/source.ts';

const counts = (c: Record<string, number>) => countsText(c, '  ', '—');
const BARS = '▁▂▃▄▅▆▇█';
/** A sparkline of `values`, scaled to their maximum (a flat line when all are 0). */
export const sparkline = (values: number[]): string => {
  const max = Math.max(...values, 0);
  return values.map((v) => (max === 0 ? BARS[0] : BARS[Math.min(7, Math.floor((v / max) * 7.999))])).join('');
};
/** The last whole second's count. */
const perSecond = (values: number[]) => `${values.at(-2) ?? 0}/s`;
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * How the rows below the fixed part are shared on a terminal `rows` high: the fixed part
 * (header, counters, sparklines, queue, webhooks, titles, footer) takes 15; destinations get
 * a third of the rest (at least 2), the latest emails the remainder.
 */
export function layout(rows: number, destinations: number): { destinations: number; latest: number } {
  const free = Math.max(4, rows - 15);
  const d = Math.min(destinations, Math.max(2, Math.floor(free / 3)));
  return { destinations: d, latest: Math.max(2, free - Math.max(1, d)) };
}

function Top({ source, refreshMs, start }: { source: TopSource; refreshMs: number; start: TopFilter }): ReactElement {
  const { exit } = useApp();
  const [snap, setSnap] = useState<Snapshot | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [filter, setFilter] = useState<TopFilter>(start);
  const [typing, setTyping] = useState<string | null>(null);
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [detail, setDetail] = useState<EmailDetail | null>(null);
  // Read now and every refreshMs (never two readings at once); a filter change reads at once.
  usePolling(refreshMs, [source, filter], () =>
    source.snapshot(filter).then((s) => () => {
      setSnap(s);
      setProblem(null);
    }),
  );
  // The open email's detail, refreshed with the rest.
  usePolling(refreshMs, [source, open], () =>
    open ? source.detail(open).then((d) => () => setDetail(d)) : Promise.resolve(() => setDetail(null)),
  );
  /**
   * Runs `read` now and every `ms`, anew when `deps` change; what it read is shown (the
   * function it resolves to is called) only if `deps` have not changed meanwhile.
   */
  function usePolling(ms: number, deps: unknown[], read: () => Promise<() => void>) {
    const busy = useRef(false);
    useEffect(() => {
      let live = true;
      const tick = () => {
        if (busy.current) return;
        busy.current = true;
        read()
          .then((show) => live && show())
          .catch((err: unknown) => live && setProblem(errorText(err)))
          .finally(() => (busy.current = false));
      };
      tick();
      const timer = setInterval(tick, ms);
      return () => {
        live = false;
        clearInterval(timer);
      };
    }, [ms, ...deps]);
  }

  /** Applies the typed filter, or says why it cannot. */
  const apply = (text: string) => {
    const f = parseFilterText(text);
    setTyping(null);
    if ('error' in f) return setProblem(`filter ${f.error}`);
    setFilter(f);
    setSelected(0);
    setOpen(null);
  };
  /** Text typed or pasted at the filter prompt: a line break in it applies what came before. */
  const typed = (sofar: string, text: string) => {
    const end = text.search(/[\r\n]/);
    if (end === -1) setTyping(sofar + text);
    else apply(sofar + text.slice(0, end));
  };

  useInput((input, key) => {
    if (typing !== null) {
      if (key.escape) setTyping(null);
      else if (key.return) apply(typing);
      else if (key.backspace || key.delete) setTyping(typing.slice(0, -1));
      else if (key.ctrl && input === 'c') exit();
      else if (input && !key.ctrl && !key.meta) typed(typing, input);
      return;
    }
    if (input === 'q' || (key.ctrl && input === 'c')) exit();
    else if (input.startsWith('/')) typed('', input.slice(1));
    else if (key.escape) {
      if (open) setOpen(null);
      else setFilter({});
    } else if (key.upArrow) setSelected((s) => Math.max(0, s - 1));
    else if (key.downArrow) setSelected((s) => Math.min(Math.max(0, (snap?.latest.length ?? 1) - 1), s + 1));
    else if (key.return) setOpen(snap?.latest[selected]?.id ?? null);
  });

  const width = Math.max(64, process.stdout.columns || 80);
  const rows = Math.max(20, process.stdout.rows || 24);
  if (!snap) return h(Text, null, problem ? `svc top: ${problem}` : `svc top — reading ${source.label}…`);

  const spark = Math.min(60, width - 20);
  const line = (label: string, values: number[]) =>
    h(Text, null, `${label.padEnd(10)}${sparkline(values.slice(-spark))} ${perSecond(values)}`);
  const fit = layout(rows, snap.destinations.length);
  const title = (t: string) => h(Text, { bold: true }, t);

  const header = h(
    Text,
    { bold: true },
    cut(`svc top — ${snap.at.slice(0, 19).replace('T', ' ')} UTC · ${scopeText(snap)}`, width),
  );
  const stats = h(
    Box,
    { flexDirection: 'column' },
    h(Text, null, cut(`last minute  ${counts(snap.last_minute)}`, width)),
    h(Text, null, cut(`this hour    ${counts(snap.this_hour)}`, width)),
    line('accepted', snap.per_second.accepted),
    line('delivered', snap.per_second.delivered),
    line('bounced', snap.per_second.bounced),
    h(Text, null, cut(queueText(snap), width)),
    h(
      Text,
      snap.webhooks.failed_last_hour || snap.webhooks.auto_disabled.length ? { color: 'yellow' } : null,
      cut(webhooksText(snap), width),
    ),
  );
  const destinations = h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    title(cut(destinationHead(width), width)),
    ...(snap.destinations.length
      ? snap.destinations
          .slice(0, fit.destinations)
          .map((d) =>
            h(Text, { key: d.domain, ...(d.throttled ? { color: 'yellow' } : {}) }, destinationText(d, width)),
          )
      : [h(Text, { key: 'none', dimColor: true }, 'none')]),
  );
  const filterNow = filterText(snap.filter);
  const body = open
    ? h(
        Box,
        { flexDirection: 'column', marginTop: 1 },
        title(cut(`email ${open}${detail ? ` — ${detail.status}` : ''}`, width)),
        ...(detail
          ? [
              ...detail.waiting.map((w, i) => h(Text, { key: `w${i}`, color: 'cyan' }, cut(w, width))),
              ...detail.events
                .slice(-Math.max(1, fit.latest - detail.waiting.length))
                .map((ev, i) =>
                  h(
                    Text,
                    { key: `e${i}` },
                    cut(
                      `${clockOf(ev.at)} ${ev.type.padEnd(10)} ${`${ev.recipient ?? ''} ${ev.detail}`.trim()}`,
                      width,
                    ),
                  ),
                ),
            ]
          : [h(Text, { key: 'none', dimColor: true }, 'reading…')]),
      )
    : h(
        Box,
        { flexDirection: 'column', marginTop: 1 },
        title(`latest emails${filterNow ? ` (${filterNow})` : ''}`),
        ...(snap.latest.length
          ? snap.latest
              .slice(0, fit.latest)
              .map((e, i) =>
                h(
                  Text,
                  { key: e.id, inverse: i === selected },
                  `${i === selected ? '>' : ' '} ${latestText(e, width - 2)}`,
                ),
              )
          : [h(Text, { key: 'none', dimColor: true }, filterNow ? 'none match' : 'none')]),
      );
  const footer =
    typing !== null
      ? h(Text, null, `filter: ${typing}█  (a status, an address, a tag; Enter applies, Esc cancels)`)
      : h(
          Text,
          { dimColor: true },
          open ? 'Esc back · q quit' : `↑↓ select · Enter events · / filter${filterNow ? ' · Esc clear' : ''} · q quit`,
        );
  return h(
    Box,
    { flexDirection: 'column' },
    header,
    stats,
    destinations,
    body,
    problem ? h(Text, { color: 'red' }, cut(problem, width)) : null,
    footer,
  );
}

/** The live view of `svc top`: refreshes every `refreshMs` until q or Ctrl-C; the terminal is restored on exit. */
export async function runTop(source: TopSource, filter: TopFilter = {}, refreshMs = 1000): Promise<void> {
  // svc top starts this only when stdin and stdout are terminals: a live view then, even
  // when the environment says CI (Ink would otherwise print only the last frame, at exit).
  const app = render(h(Top, { source, refreshMs, start: filter }), { exitOnCtrlC: false, interactive: true });
  await app.waitUntilExit();
}
