// Route patterns (issue 34): an exact address, `*@domain`, or `prefix+*@domain`, and which
// route an address reaches. Pure: the service reads the routes, these rules pick one.
import { AppError } from '../errors.ts';
import type { RouteKind, RouteRow } from './store.ts';

export interface Pattern {
  kind: RouteKind;
  local_part: string;
  domain: string;
}

/** RFC 5322's dot-atom text, the local parts a route may name (no quoted strings). */
const ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

const invalid = (message: string) =>
  new AppError('request_validation_failed', 'The request failed validation', {
    fields: [{ field: 'pattern', message, code: 'invalid_format' }],
  });

/**
 * A pattern as written: `support@example.com`, `*@example.com` or `reply+*@example.com`,
 * lower-cased (local parts are matched without regard to case, as most receivers do).
 */
export function parsePattern(written: string): Pattern {
  const s = written.trim().toLowerCase();
  const at = s.lastIndexOf('@');
  if (at <= 0 || at === s.length - 1) throw invalid('must be an address, *@domain or prefix+*@domain');
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  if (local.length > 64) throw invalid('the local part must be at most 64 characters');
  if (local === '*') return { kind: 'catchall', local_part: '', domain };
  if (local.endsWith('+*')) {
    const prefix = local.slice(0, -2);
    if (!ATOM.test(prefix) || prefix.includes('+') || prefix.includes('*'))
      throw invalid('a prefix pattern is prefix+*@domain, the prefix without + or *');
    return { kind: 'prefix', local_part: prefix, domain };
  }
  if (!ATOM.test(local) || local.includes('*'))
    throw invalid('the local part must be letters, digits and . _ - + (or *)');
  return { kind: 'exact', local_part: local, domain };
}

/** A pattern as shown. */
export function patternOf(r: Pick<RouteRow, 'kind' | 'local_part' | 'domain'>): string {
  if (r.kind === 'catchall') return `*@${r.domain}`;
  if (r.kind === 'prefix') return `${r.local_part}+*@${r.domain}`;
  return `${r.local_part}@${r.domain}`;
}

export interface RouteMatch<R> {
  route: R;
  /** The recipient as given. */
  address: string;
  /** For a prefix route, what follows the `+` (the thread or ticket an app encoded); else null. */
  tag: string | null;
}

/** The address's local part and domain, lower-cased; null for one without both. */
export function splitAddress(address: string): { local: string; domain: string } | null {
  const s = address.trim().toLowerCase();
  const at = s.lastIndexOf('@');
  if (at <= 0 || at === s.length - 1) return null;
  return { local: s.slice(0, at), domain: s.slice(at + 1) };
}

/**
 * The route `address` reaches among `routes` (those of its domain): an exact address first,
 * then the prefix before its first `+`, then the domain's catch-all; null when none.
 */
export function matchRoute<R extends Pick<RouteRow, 'kind' | 'local_part' | 'domain'>>(
  routes: R[],
  address: string,
): RouteMatch<R> | null {
  const a = splitAddress(address);
  if (!a) return null;
  const at = routes.filter((r) => r.domain === a.domain);
  const exact = at.find((r) => r.kind === 'exact' && r.local_part === a.local);
  if (exact) return { route: exact, address, tag: null };
  const plus = a.local.indexOf('+');
  if (plus > 0) {
    const prefix = at.find((r) => r.kind === 'prefix' && r.local_part === a.local.slice(0, plus));
    if (prefix) return { route: prefix, address, tag: address.trim().slice(plus + 1, address.trim().lastIndexOf('@')) };
  }
  const all = at.find((r) => r.kind === 'catchall');
  return all ? { route: all, address, tag: null } : null;
}

/**
 * Whether forwarding to `targets` from the route `start` comes back to it: each target that a
 * route of this server takes and forwards is followed (`routesAt` reads a domain's routes),
 * at most `maxHops` deep. The address chain of the loop, or null.
 */
export async function forwardLoop(
  start: Pattern & { id: string | null },
  targets: string[],
  routesAt: (domain: string) => Promise<RouteRow[]>,
  maxHops = 10,
): Promise<string[] | null> {
  const seen = new Set<string>();
  const walk = async (addresses: string[], path: string[], depth: number): Promise<string[] | null> => {
    if (depth > maxHops) return null;
    for (const address of addresses) {
      const lower = address.trim().toLowerCase();
      const a = splitAddress(lower);
      if (!a || seen.has(lower)) continue;
      seen.add(lower);
      // The routes as they would be: the stored ones of the domain, the one being written in place of its old self.
      const others: (Pick<RouteRow, 'kind' | 'local_part' | 'domain' | 'action' | 'forward_to'> & {
        id: string | null;
      })[] = (await routesAt(a.domain)).filter((r) => r.id !== start.id);
      const candidates =
        a.domain === start.domain ? [...others, { ...start, action: 'forward' as const, forward_to: null }] : others;
      const hit = matchRoute(candidates, lower);
      if (!hit) continue;
      if (hit.route.id === start.id) return [...path, lower];
      if (hit.route.action !== 'forward') continue;
      const next = JSON.parse(hit.route.forward_to ?? '[]') as string[];
      const found = await walk(next, [...path, lower], depth + 1);
      if (found) return found;
    }
    return null;
  };
  return walk(targets, [patternOf(start)], 0);
}
