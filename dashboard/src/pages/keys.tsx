// The project's API keys.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Head, ErrorLine, messageOf, valueIn, when, type PageProps } from '../ui.tsx';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  permissions: string;
  env: string;
  last_used_at: string | null;
  created_at: string;
  key?: string;
}

/** The project's API keys: created with the key shown once, listed by prefix, revoked. */
export function Keys({ org, project }: PageProps) {
  const path = `/v1/organizations/${org}/projects/${project}/api-keys`;
  const [keys, setKeys] = useState<ApiKey[]>();
  const [created, setCreated] = useState<ApiKey>();
  const [error, setError] = useState<string>();
  const load = () => api<ApiKey[]>('GET', path).then(setKeys, (e: unknown) => setError(messageOf(e)));
  useEffect(() => void load(), [path]);
  async function create(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    try {
      setCreated(
        await api<ApiKey>('POST', path, { name: field('name'), env: field('env'), permissions: field('permissions') }),
      );
      setError(undefined);
      form.reset();
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  }
  async function revoke(k: ApiKey) {
    if (!confirm(`Revoke ${k.name}? Requests with it fail at once.`)) return;
    try {
      await api('DELETE', `${path}/${k.id}`);
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <main>
      <h1>API keys</h1>
      <form class="filters" onSubmit={(e) => void create(e)}>
        <label>
          Name
          <input name="name" required maxLength={100} />
        </label>
        <label>
          Environment
          <select name="env">
            <option value="LIVE">LIVE</option>
            <option value="TEST">TEST</option>
          </select>
        </label>
        <label>
          Permissions
          <select name="permissions">
            <option value="FULL_ACCESS">FULL_ACCESS</option>
            <option value="SENDING_ONLY">SENDING_ONLY</option>
            <option value="READ_ONLY">READ_ONLY</option>
          </select>
        </label>
        <button type="submit">Create key</button>
      </form>
      {created?.key && (
        <div class="notice" role="status">
          <p>
            The key <strong>{created.name}</strong>, shown this once: copy it now.
          </p>
          <code class="secret">{created.key}</code>
        </div>
      )}
      <ErrorLine error={error} />
      {keys && (
        <table>
          <Head cols={['Name', 'Key', 'Environment', 'Permissions', 'Last used (UTC)']} actions />
          <tbody>
            {keys.map((k) => (
              <tr>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.env}</td>
                <td>{k.permissions}</td>
                <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => void revoke(k)}>
                    Revoke <span class="visually-hidden">{k.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
