import type { Snapshot } from './repo.ts';

/** Counts by type as "type n" joined by `sep`, or `none` when there are none. */
export const countsText = (c: Record<string, number>, sep = ', ', none = 'none') =>
  Object.keys(c).length
    ? Object.entries(c)
        .map(([k, v]) => `${k} ${v}`)
        .join(sep)
    : none;

/** `t` cut to `n` characters, with an ellipsis when cut. */
export const cut = (t: string, n: number) => (t.length > n ? `${t.slice(0, Math.max(0, n - 1))}…` : t);

/** The snapshot as text that fits 80 columns. */
export function formatSnapshot(s: Snapshot): string {
  const counts = (c: Record<string, number>) => countsText(c);
  const lines = [
    `svc top — ${s.at}`,
    `last minute:   ${counts(s.last_minute)}`,
    `this hour:     ${counts(s.this_hour)}`,
    `previous hour: ${counts(s.previous_hour)}`,
    `queue: ${s.queue.recipients} recipients waiting, oldest ${s.queue.oldest_seconds} s`,
  ];
  if (s.waiting_by_destination.length) {
    lines.push('waiting by destination:');
    for (const w of s.waiting_by_destination) {
      const t = w.throttled ? `, throttled to ${w.concurrency}` : '';
      lines.push(`  ${cut(w.domain, 50)}: ${w.recipients}${t}`);
    }
  }
  lines.push('latest emails:');
  for (const e of s.latest) {
    lines.push(
      `  ${e.created_at.slice(11, 19)} ${e.status.padEnd(10)} ${cut(e.to.join(','), 28).padEnd(28)} ${cut(e.subject, 28)}`,
    );
  }
  lines.push(
    `webhooks: ${s.webhooks.pending_events} events pending, ${s.webhooks.auto_disabled.length} switched off` +
      s.webhooks.auto_disabled.map((w) => `\n  off: ${w.id} ${cut(w.url, 60)}`).join(''),
  );
  return lines.join('\n');
}
