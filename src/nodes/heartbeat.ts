import { hostname } from 'node:os';
import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { newId } from '../lib/ids.ts';
import { notOverlapping } from '../lib/periodic.ts';
import { VERSION } from '../version.ts';
import type { NodesStore } from './store.ts';

/** A node's row is rewritten at least this often, so readers can tell a live node from a dead one. */
export const HEARTBEAT_MS = 10_000;
/** A node not seen for this long is taken for gone (svc top leaves it out). */
export const NODE_STALE_MS = 3 * HEARTBEAT_MS;
/** How often the figures are looked at; the row is written only when they changed, or at HEARTBEAT_MS. */
const LOOK_MS = 1000;

export interface Heartbeat {
  /** Removes the node's row (a clean stop). */
  stop(): Promise<void>;
}

/**
 * Keeps this server's row in `nodes` (src/nodes/store.ts) fresh while it runs: the relay
 * sessions it holds are written within a second of changing, and the row at least every
 * HEARTBEAT_MS. One tiny write at most per second, off the request path.
 */
export function startHeartbeat(deps: {
  repo: NodesStore;
  clock: Clock;
  logger: Logger;
  relaySessions: () => number;
}): Heartbeat {
  const started = deps.clock.now();
  const row = {
    id: newId(started),
    hostname: hostname(),
    pid: process.pid,
    version: VERSION,
    started_at: iso(started),
    seen_at: iso(started),
    relay_sessions: deps.relaySessions(),
  };
  let written: Promise<unknown> = Promise.resolve();
  let writtenAt = 0;
  // One write at a time: a store slower than the look would otherwise pile them up.
  const look = notOverlapping(() => {
    const now = deps.clock.now();
    const sessions = deps.relaySessions();
    if (writtenAt && sessions === row.relay_sessions && now - writtenAt < HEARTBEAT_MS) return written;
    row.relay_sessions = sessions;
    row.seen_at = iso(now);
    writtenAt = now;
    return (written = deps.repo
      .save({ ...row })
      .catch((err: unknown) => deps.logger.warn({ err }, 'node heartbeat failed')));
  });
  look();
  const timer = deps.clock.setInterval(look, LOOK_MS);
  return {
    async stop() {
      timer.cancel();
      await written;
      await deps.repo.remove(row.id).catch((err: unknown) => deps.logger.warn({ err }, 'node row not removed'));
    },
  };
}
