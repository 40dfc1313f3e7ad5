// The organization's members and pending invitations; ADMIN and up change roles, remove, invite, revoke.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { mayAdmin, orgPath, valueIn, when, type PageProps, type Role, Head, Outcome, useOutcome } from '../ui.tsx';

interface Member {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}
interface Invitation {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  /** Only in the answer to the invitation. */
  token?: string;
}
const ROLES: readonly Role[] = ['VIEWER', 'DEVELOPER', 'ADMIN', 'OWNER'];

/** The page a new member opens to join: the dashboard's own address, and the token. */
const acceptanceLink = (token: string) => `${location.origin}/#/invitations/${encodeURIComponent(token)}`;

/** The members with their roles, the pending invitations, and inviting an address. */
export function Members({ org, role }: PageProps) {
  const path = orgPath({ org });
  const admin = mayAdmin(role);
  const [members, setMembers] = useState<Member[]>();
  const [pending, setPending] = useState<Invitation[]>([]);
  const [invited, setInvited] = useState<Invitation>();
  const { notice, error, run } = useOutcome();
  async function load() {
    const [m, i] = await Promise.all([
      api<Member[]>('GET', `${path}/members`),
      api<Invitation[]>('GET', `${path}/invitations`),
    ]);
    setMembers(m);
    setPending(i);
  }
  useEffect(() => void run(async () => void (await load())), [path]);
  /** Runs a change, then shows the members as they now are (a refused role change goes back too). */
  const act = (work: () => Promise<string | undefined>) =>
    run(async () => {
      try {
        return await work();
      } finally {
        await load();
      }
    });
  function invite(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    void act(async () => {
      setInvited(await api<Invitation>('POST', `${path}/invitations`, { email: field('email'), role: field('role') }));
      form.reset();
      return undefined;
    });
  }
  const changeRole = (m: Member, to: string) =>
    void act(async () => {
      await api('PATCH', `${path}/members/${m.user_id}`, { role: to });
      return `${m.email} is ${to} now.`;
    });
  const remove = (m: Member) => {
    if (!confirm(`Remove ${m.email} from the organization?`)) return;
    void act(async () => {
      await api('DELETE', `${path}/members/${m.user_id}`);
      return `${m.email} is removed.`;
    });
  };
  const revoke = (i: Invitation) => {
    if (!confirm(`Revoke the invitation of ${i.email}? Its link stops working.`)) return;
    void act(async () => {
      await api('DELETE', `${path}/invitations/${i.id}`);
      return `The invitation of ${i.email} is revoked.`;
    });
  };
  return (
    <main>
      <h1>Members</h1>
      {admin && (
        <form class="filters" onSubmit={invite}>
          <label>
            Address to invite
            <input name="email" type="email" required />
          </label>
          <label>
            Invite as
            <select name="role">
              {ROLES.map((r) => (
                <option value={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit">Invite</button>
        </form>
      )}
      {invited?.token && (
        <div class="notice" role="status">
          <p>
            <strong>{invited.email}</strong> is invited as {invited.role} until {when(invited.expires_at)} UTC. Send
            them this link, shown this once:
          </p>
          <code class="secret">{acceptanceLink(invited.token)}</code>
        </div>
      )}
      <Outcome notice={notice} error={error} />
      {members && (
        <table>
          <Head cols={['Member', 'Role', 'Joined (UTC)']} actions={admin} />
          <tbody>
            {members.map((m) => (
              <tr>
                <td>{m.email}</td>
                <td>
                  {admin ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      onChange={(e) => changeRole(m, e.currentTarget.value)}
                    >
                      {ROLES.map((r) => (
                        <option value={r}>{r}</option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{when(m.created_at)}</td>
                {admin && (
                  <td>
                    <button type="button" class="secondary" onClick={() => remove(m)}>
                      Remove <span class="visually-hidden">{m.email}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pending.length > 0 && (
        <>
          <h2>Pending invitations</h2>
          <table>
            <Head cols={['Address', 'Role', 'Expires (UTC)']} actions={admin} />
            <tbody>
              {pending.map((i) => (
                <tr>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>{when(i.expires_at)}</td>
                  {admin && (
                    <td>
                      <button type="button" class="secondary" onClick={() => revoke(i)}>
                        Revoke <span class="visually-hidden">the invitation of {i.email}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </main>
  );
}
