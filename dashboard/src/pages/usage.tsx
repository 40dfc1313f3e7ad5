// PLACEHOLDER while issue 31's helper builds this page; replaced before the session ends.
import type { PageProps } from '../ui.tsx';

export function Usage(_props: PageProps) {
  return (
    <main>
      <h1>Usage</h1>
    </main>
  );
}
