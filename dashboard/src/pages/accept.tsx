// PLACEHOLDER while issue 31's helper builds this page; replaced before the session ends.
export function AcceptInvitation(_props: { token: string; onSignedIn: () => void }) {
  return (
    <main>
      <h1>Accept the invitation</h1>
    </main>
  );
}
