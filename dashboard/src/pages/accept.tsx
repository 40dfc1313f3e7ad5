// Accepting an invitation (#/invitations/<token>): a new user chooses a first password and joins;
// a user with an account signs in on the page and joins, or joins as the user signed in in this
// browser. The page does not try the refresh cookie itself to find out who that is: the shell
// already does, and two refreshes at once are a reuse that revokes the session
// (src/sessions/rotation.ts); the API answers who may accept.
import { useState } from 'preact/hooks';
import { api, ApiError, signIn } from '../api.ts';
import { ErrorLine, messageOf, valueIn } from '../ui.tsx';

/** How the invitee joins: with a new account, or by signing in to theirs first. */
type Way = 'new' | 'sign-in';

/** The invitation's page: a first password, or a sign-in, then the invitee is a member and signed in. */
export function AcceptInvitation({ token, onSignedIn }: { token: string; onSignedIn: () => void }) {
  const [way, setWay] = useState<Way>('new');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const accept = (body?: { password: string }) =>
    api<{ email: string }>('POST', `/v1/invitations/${encodeURIComponent(token)}/accept`, body);

  /** Runs the way of joining; once it is done the invitee is a member, signed in. */
  async function join(work: () => Promise<unknown>) {
    setBusy(true);
    try {
      await work();
      onSignedIn();
    } catch (err) {
      // The address has an account already: the API says so; sign in, then accept.
      if (way === 'new' && err instanceof ApiError && err.code === 'conflict') setWay('sign-in');
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }
  function submit(e: Event) {
    e.preventDefault();
    const field = valueIn(e.currentTarget as HTMLFormElement);
    void join(async () => {
      if (way === 'new') {
        // The answer is the membership, not a session: sign in with the password just chosen.
        const member = await accept({ password: field('password') });
        await signIn(member.email, field('password'));
      } else {
        await signIn(field('email'), field('password'));
        await accept();
      }
    });
  }
  return (
    <main class="signin accept">
      <h1>Join the organization</h1>
      <form onSubmit={submit}>
        {way === 'new' ? (
          <p>Choose a password for your new account (at least 8 characters).</p>
        ) : (
          <label key="email">
            Email
            <input name="email" type="email" autocomplete="username" required />
          </label>
        )}
        {/* Keyed: the password typed stays when the page switches to signing in. */}
        <label key="password">
          Password
          <input
            name="password"
            type="password"
            autocomplete={way === 'new' ? 'new-password' : 'current-password'}
            minLength={way === 'new' ? 8 : undefined}
            required
          />
        </label>
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          {way === 'new' ? 'Create the account and join' : 'Sign in and join'}
        </button>
      </form>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setWay(way === 'new' ? 'sign-in' : 'new');
            setError(undefined);
          }}
        >
          {way === 'new' ? 'I have an account: sign in instead' : 'I am new: choose a password instead'}
        </button>
      </p>
      {way === 'sign-in' && (
        <p>
          <button type="button" class="secondary" disabled={busy} onClick={() => void join(() => accept())}>
            Join as the user signed in here
          </button>
        </p>
      )}
    </main>
  );
}
