import { filterText } from './filter.ts';
import type { Destination, Snapshot } from './repo.ts';

/** Counts by type as "type n" joined by `sep`, or `none` when there are none. */
export const countsText = (c: Record<string, number>, sep = ', ', none = 'none') =>
  Object.keys(c).length
    ? Object.entries(c)
        .map(([k, v]) => `${k} ${v}`)
        .join(sep)
    : none;

/** `t` cut to `n` characters, with an ellipsis when cut. */
export const cut = (t: string, n: number) => (t.length > n ? `${t.slice(0, Math.max(0, n - 1))}…` : t);

/** HH:MM:SS of an ISO time (UTC). */
export const clockOf = (iso: string) => iso.slice(11, 19);

/** What is read: the whole server or one project. */
export const scopeText = (s: Snapshot) => (s.project_id ? `project ${s.project_id}` : 'whole server');

export const queueText = (s: Snapshot) =>
  `queue ${s.queue.recipients} waiting, oldest ${s.queue.oldest_seconds} s · ` +
  (s.relay.nodes
    ? `relay ${s.relay.sessions} session${s.relay.sessions === 1 ? '' : 's'}${s.relay.nodes > 1 ? ` on ${s.relay.nodes} servers` : ''}`
    : 'no server running');

export const webhooksText = (s: Snapshot) =>
  `webhooks ${s.webhooks.pending_events} pending, ${s.webhooks.failed_last_hour} failed in the last hour, ` +
  `${s.webhooks.auto_disabled.length} switched off`;

/** Columns of a destination's name in a table `width` wide (the rest: 39 of counts, 19 of throttle). */
const nameColumns = (width: number) => Math.max(16, width - 58);

/** The header of the destinations table, `width` columns (at least 72). */
export const destinationHead = (width: number) =>
  `${'destination'.padEnd(nameColumns(width))}${'waiting'.padStart(8)}${'deferred'.padStart(9)}` +
  `${'deliv/min'.padStart(11)}${'bounce/min'.padStart(11)}`;

/** A row of the destinations table. */
export function destinationText(d: Destination, width: number): string {
  const name = nameColumns(width);
  const throttle = d.throttled
    ? d.paused_until
      ? ` paused to ${clockOf(d.paused_until)}`
      : ` throttled to ${d.concurrency}`
    : '';
  const sts = d.mta_sts ? ` sts:${d.mta_sts}` : '';
  return (
    `${cut(d.domain, name - 1).padEnd(name)}` +
    `${String(d.waiting).padStart(8)}${String(d.deferred).padStart(9)}${String(d.delivered).padStart(11)}${String(d.bounced).padStart(11)}` +
    throttle +
    sts
  ).slice(0, width);
}

/** An email of the latest list in `width` columns (at least 64). */
export function latestText(e: Snapshot['latest'][number], width: number): string {
  const to = Math.max(20, Math.floor((width - 22) / 2));
  return `${clockOf(e.created_at)} ${e.status.padEnd(10)} ${cut(e.to.join(','), to - 1).padEnd(to)} ${cut(e.subject, width - 22 - to)}`;
}

/** The snapshot as text that fits 80 columns. */
export function formatSnapshot(s: Snapshot): string {
  const lines = [
    `svc top — ${s.at.slice(0, 19).replace('T', ' ')} UTC · ${scopeText(s)}`,
    `last minute:   ${countsText(s.last_minute)}`,
    `this hour:     ${countsText(s.this_hour)}`,
    `previous hour: ${countsText(s.previous_hour)}`,
    queueText(s),
  ];
  if (s.destinations.length) {
    lines.push(`  ${destinationHead(78)}`);
    for (const d of s.destinations) lines.push(`  ${destinationText(d, 78)}`);
  }
  const filter = filterText(s.filter);
  lines.push(`latest emails${filter ? ` (${filter})` : ''}:`);
  for (const e of s.latest) lines.push(`  ${latestText(e, 78)}`);
  lines.push(webhooksText(s) + s.webhooks.auto_disabled.map((w) => `\n  off: ${w.id} ${cut(w.url, 60)}`).join(''));
  return lines.map((l) => cut(l, 80)).join('\n');
}
