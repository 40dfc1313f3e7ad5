// PLACEHOLDER while issue 31's helper builds this page; replaced before the session ends.
import type { PageProps } from '../ui.tsx';

export function Settings(_props: PageProps) {
  return (
    <main>
      <h1>Settings</h1>
    </main>
  );
}
