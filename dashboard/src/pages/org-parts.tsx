// Parts the organization's pages (domains, members, settings) share: how a change tells how it
// went, and a table's header row. Candidates for ui.tsx once the other pages use them too.
import { useState } from 'preact/hooks';
import { ErrorLine, messageOf } from '../ui.tsx';

/** A change's outcome: `run` sets the notice it returns (none when undefined) or the API's error. */
export function useOutcome() {
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  async function run(work: () => Promise<string | undefined>): Promise<void> {
    try {
      setNotice(await work());
      setError(undefined);
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  }
  return { notice, error, run };
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
export function Head({ cols, actions }: { cols: string[]; actions: boolean }) {
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
