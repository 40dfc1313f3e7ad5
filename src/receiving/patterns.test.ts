import { describe, expect, it } from 'vitest';
import { forwardLoop, matchRoute, parsePattern, patternOf } from './patterns.ts';
import type { RouteRow } from './store.ts';

const route = (id: string, pattern: string, action: RouteRow['action'] = 'hold', forward: string[] = []): RouteRow => ({
  id,
  project_id: 'p',
  domain_id: 'd',
  ...parsePattern(pattern),
  action,
  webhook_id: null,
  forward_to: action === 'forward' ? JSON.stringify(forward) : null,
  created_at: '',
  updated_at: '',
});

describe('route patterns', () => {
  it('reads an exact address, a catch-all and a prefix, in lower case, and shows them as written', () => {
    expect(parsePattern(' Support@Example.COM ')).toEqual({
      kind: 'exact',
      local_part: 'support',
      domain: 'example.com',
    });
    expect(parsePattern('*@example.com')).toEqual({ kind: 'catchall', local_part: '', domain: 'example.com' });
    expect(parsePattern('reply+*@example.com')).toEqual({ kind: 'prefix', local_part: 'reply', domain: 'example.com' });
    for (const p of ['support@example.com', '*@example.com', 'reply+*@example.com'])
      expect(patternOf(parsePattern(p))).toBe(p);
  });

  it('refuses what is not one of the three, naming the pattern', () => {
    for (const bad of [
      'example.com',
      '@example.com',
      'a@',
      'a*b@example.com',
      're+ply+*@example.com',
      'a b@x.com',
      '+*@x.com',
    ]) {
      expect(() => parsePattern(bad), bad).toThrow(expect.objectContaining({ code: 'request_validation_failed' }));
    }
  });

  it('matches an exact address before a prefix, a prefix before the catch-all, and passes on what follows the +', () => {
    const routes = [route('all', '*@x.test'), route('pre', 'reply+*@x.test'), route('one', 'reply+vip@x.test')];
    expect(matchRoute(routes, 'Reply+VIP@x.test')).toMatchObject({ route: { id: 'one' }, tag: null });
    expect(matchRoute(routes, 'reply+Ticket-42@X.test')).toMatchObject({ route: { id: 'pre' }, tag: 'Ticket-42' });
    expect(matchRoute(routes, 'anyone@x.test')).toMatchObject({ route: { id: 'all' }, tag: null });
    expect(matchRoute(routes, 'anyone@y.test')).toBeNull();
    expect(matchRoute([route('pre', 'reply+*@x.test')], 'reply@x.test')).toBeNull();
    expect(matchRoute(routes, 'not-an-address')).toBeNull();
  });

  it('finds a forward that comes back to its route, directly or through other routes, and not a chain that ends', async () => {
    const stored: RouteRow[] = [
      route('b', 'b@two.test', 'forward', ['c@three.test']),
      route('c', 'c@three.test', 'forward', ['support@one.test']),
      route('d', 'd@two.test', 'forward', ['outside@elsewhere.test']),
    ];
    const routesAt = (domain: string) => Promise.resolve(stored.filter((r) => r.domain === domain));
    const start = { ...parsePattern('support@one.test'), id: null };
    expect(await forwardLoop(start, ['support@one.test'], routesAt)).toEqual(['support@one.test', 'support@one.test']);
    expect(await forwardLoop(start, ['b@two.test'], routesAt)).toEqual([
      'support@one.test',
      'b@two.test',
      'c@three.test',
      'support@one.test',
    ]);
    expect(await forwardLoop(start, ['d@two.test', 'x@one.test'], routesAt)).toBeNull();
    // A catch-all reaches what no other route of its domain takes.
    const all = { ...parsePattern('*@one.test'), id: null };
    expect(await forwardLoop(all, ['anyone@one.test'], routesAt)).not.toBeNull();
  });
});
