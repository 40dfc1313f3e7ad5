import type { App } from '../app.ts';
import { UsageError } from './io.ts';

/** A project a command reads, with the name its output shows. */
export interface ProjectRef {
  id: string;
  name: string;
}

/**
 * True for `--all-projects`, false for `--project P`; neither is wrong usage, said
 * before the store is opened (commander refuses both together).
 */
export function allProjects(opts: Record<string, unknown>): boolean {
  if (opts.allProjects === true) return true;
  if (typeof opts.project === 'string') return false;
  throw new UsageError('give --project P, or --all-projects for every project');
}

/** Every project of every organization: an operator's server-wide view (`--all-projects`). */
export async function everyProject(app: App): Promise<ProjectRef[]> {
  const orgs = await app.accounts.listOrgs();
  return (await Promise.all(orgs.map((o) => app.accounts.listProjects(o.id)))).flat();
}

/** Each row with the project it belongs to, for output across projects. */
export const withProjectOf = <T extends object>(p: ProjectRef, rows: T[]) =>
  rows.map((r) => ({ project_id: p.id, project: p.name, ...r }));

/** `list` of every project, each row naming its project, project by project. */
export async function listAcrossProjects<T extends object>(app: App, list: (projectId: string) => Promise<T[]>) {
  const lists = await Promise.all((await everyProject(app)).map(async (p) => withProjectOf(p, await list(p.id))));
  return lists.flat();
}
