// A write from a page (the templates and webhooks pages): what it said, or the API's refusal.
import { useState } from 'preact/hooks';
import { messageOf } from '../ui.tsx';

/**
 * Runs a write, then shows what it says in the status line or the API's refusal, and reloads.
 * A candidate for ui.tsx, with its like in org-parts.tsx.
 */
export function useAction(reload: () => Promise<unknown>) {
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  async function act(work: () => Promise<string | undefined>) {
    try {
      const said = await work();
      setNotice(said);
      setError(undefined);
      await reload();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  }
  return { notice, error, setError, act };
}

/** A write's outcome, read out to screen readers. */
export function Notice({ text }: { text: string | undefined }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
}
