// Sign-in with an email and a password.
import { useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { ErrorLine, messageOf, valueIn } from '../ui.tsx';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    setBusy(true);
    try {
      await signIn(field('email'), field('password'));
      onSignedIn();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="signin">
      <h1>svc</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
