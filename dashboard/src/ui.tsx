// What every page shares: the signed-in user's roles, the page's props, and small helpers.
import { useEffect, useState } from 'preact/hooks';

export type Role = 'VIEWER' | 'DEVELOPER' | 'ADMIN' | 'OWNER';
export interface Org {
  id: string;
  name: string;
  role: Role;
}
/** The roles that may write what a page offers (resend: DEVELOPER and up); the server checks again. */
export const WRITERS: readonly Role[] = ['DEVELOPER', 'ADMIN', 'OWNER'];
/** The roles that may change an organization's domains, members and projects (the contract's role matrix). */
export const ADMINS: readonly Role[] = ['ADMIN', 'OWNER'];
export interface Project {
  id: string;
  name: string;
}

/** What the shell hands every page: where it is, the rest of the route, and the user's role there. */
export interface PageProps {
  org: string;
  /** The project of the route; an organization's page (members, domains) still has the current one. */
  project: string;
  /** The route's part after the page's name (an email's id), or ''. */
  id: string;
  query: URLSearchParams;
  role: Role | undefined;
}

export const mayWrite = (role: Role | undefined) => role !== undefined && WRITERS.includes(role);
export const mayAdmin = (role: Role | undefined) => role !== undefined && ADMINS.includes(role);

/** The API path of the project, or of the organization. */
export const projectPath = (p: { org: string; project: string }) => `/v1/organizations/${p.org}/projects/${p.project}`;
export const orgPath = (p: { org: string }) => `/v1/organizations/${p.org}`;
/** The hash of a page of the project: `page` and any rest (an id), with a query. */
export const pageHref = (org: string, project: string, page: string, query?: URLSearchParams) =>
  `#/o/${org}/p/${project}/${page}${query && query.size ? `?${query.toString()}` : ''}`;
export const emailsHref = (org: string, project: string, query?: URLSearchParams) =>
  pageHref(org, project, 'emails', query);

export const when = (iso: string) => iso.replace('T', ' ').slice(0, 19);
export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The value of a form's control by name. */
export const valueIn = (form: HTMLFormElement) => (name: string) =>
  (form.elements.namedItem(name) as HTMLInputElement).value;

/** What the API answered when a request failed, read out to screen readers. */
export function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A page whose record is still loading (busy), or could not be read (the error). */
export function Pending({ error }: { error: string | undefined }) {
  return (
    <main aria-busy={!error}>
      <ErrorLine error={error} />
    </main>
  );
}

export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** Saves `blob` as `name` through the browser. */
export function save(blob: Blob, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/**
 * A write's outcome: `run` shows the notice the write returns (none when undefined) or the
 * API's refusal, and then reloads what the page shows, when given `reload`.
 */
export function useOutcome(reload?: () => Promise<unknown>) {
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  async function run(work: () => Promise<string | undefined>): Promise<void> {
    try {
      setNotice(await work());
      setError(undefined);
      await reload?.();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  }
  return { notice, error, setError, run };
}

/** The notice in a status line read out to screen readers, and the API's error. */
export function Outcome({ notice, error }: { notice: string | undefined; error: string | undefined }) {
  return (
    <>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorLine error={error} />
    </>
  );
}

/** A table's header row; `actions` adds a last column, named for screen readers only. */
export function Head({ cols, actions = false }: { cols: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {cols.map((c) => (
          <th scope="col">{c}</th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
