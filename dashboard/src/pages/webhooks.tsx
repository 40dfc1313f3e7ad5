// PLACEHOLDER while issue 31's helper builds this page; replaced before the session ends.
import type { PageProps } from '../ui.tsx';

export function Webhooks(_props: PageProps) {
  return (
    <main>
      <h1>Webhooks</h1>
    </main>
  );
}
