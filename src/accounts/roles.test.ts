import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasRole, MIN_ROLE } from './roles.ts';
import { ROLES } from './schema.ts';

// The contract's endpoint table (docs/api.md, "Endpoints", Management API) names the least
// role of the endpoints it shows; the code's table must say the same, row by row.
const contract = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const PROJECT = '/v1/organizations/:organization_id/projects/:project_id';
const ID_OF: Record<string, string> = { 'api-keys': 'key_id', templates: 'template_id', webhooks: 'webhook_id' };

/** `.../templates/{id}` as the code's route pattern. */
function routeOf(path: string): string {
  return path
    .replace(/^\.\.\./, PROJECT)
    .replace(/\/(api-keys|templates|webhooks)\/\{id\}/, (_m, r: string) => `/${r}/:${ID_OF[r]}`)
    .replace(/\{(\w+)\}/g, ':$1');
}

const rows = [...contract.matchAll(/^\| (GET|POST|PATCH|DELETE) \| (\S+) \| (OWNER|ADMIN|DEVELOPER|VIEWER) \|/gm)].map(
  ([, method, path, role]) => [`${method} ${routeOf(path!)}`, role] as const,
);

describe('the role table', () => {
  it('reads every row of the contract that names a role', () => {
    expect(rows.length).toBeGreaterThanOrEqual(18);
  });

  it.each(rows)('%s needs %s, as the contract says', (route, role) => {
    expect(MIN_ROLE[route]).toBe(role);
  });

  it('ranks OWNER > ADMIN > DEVELOPER > VIEWER', () => {
    const order = ROLES.map((r) => ROLES.filter((min) => hasRole(r, min)).length);
    expect(order).toEqual([4, 3, 2, 1]);
  });
});
