// PLACEHOLDER while issue 31's helper builds this page; replaced before the session ends.
import type { PageProps } from '../ui.tsx';

export function Domains(_props: PageProps) {
  return (
    <main>
      <h1>Domains</h1>
    </main>
  );
}
