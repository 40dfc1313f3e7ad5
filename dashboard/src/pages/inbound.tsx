// Receiving mail (issue 34): the project's routes, the messages they received, and one message.
import { useEffect, useState } from 'preact/hooks';
import { api, download } from '../api.ts';
import {
  Pending,
  Head,
  Outcome,
  mayWrite,
  messageOf,
  pageHref,
  projectPath,
  save,
  useOutcome,
  valueIn,
  when,
  type PageProps,
} from '../ui.tsx';

interface Route {
  id: string;
  pattern: string;
  action: 'webhook' | 'forward' | 'hold';
  webhook_id: string | null;
  forward_to: string[] | null;
}

interface Received {
  id: string;
  received_at: string;
  from: string | null;
  subject: string;
  envelope: { rcpt_to: string[]; mail_from: string | null; remote_ip: string | null };
  action: Route['action'];
  outcome: string;
  detail: string | null;
  webhook: { status: string; attempts: number } | null;
  auth: { spf?: { result: string }; dmarc?: { result: string }; dkim?: { result: string; domain: string | null }[] };
}

interface ReceivedDetail extends Received {
  text: string | null;
  reply_text: string | null;
  attachments: { index: number; filename: string | null; content_type: string; size: number }[];
}

const targetOf = (r: Route) =>
  r.action === 'webhook'
    ? `webhook ${r.webhook_id ?? ''}`
    : r.action === 'forward'
      ? `forward to ${(r.forward_to ?? []).join(', ')}`
      : 'held for the API';

const outcomeOf = (m: Received) =>
  m.webhook ? `${m.outcome}: webhook ${m.webhook.status} (${m.webhook.attempts} attempts)` : m.outcome;

const authOf = (m: Received) =>
  `SPF ${m.auth.spf?.result ?? '-'}, DKIM ${m.auth.dkim?.map((d) => d.result).join('/') || 'none'}, DMARC ${m.auth.dmarc?.result ?? '-'}`;

/** The routes and received messages, or one message (`id`). */
export function Inbound(props: PageProps) {
  return props.id ? <ReceivedView {...props} /> : <InboundLists {...props} />;
}

function InboundLists({ org, project, role }: PageProps) {
  const base = projectPath({ org, project });
  const [routes, setRoutes] = useState<Route[]>();
  const [messages, setMessages] = useState<Received[]>();
  const [hooks, setHooks] = useState<{ id: string; url: string }[]>([]);
  const load = async () => {
    const [r, m, w] = await Promise.all([
      api<Route[]>('GET', `${base}/routes`),
      api<Received[]>('GET', `${base}/received-emails?limit=50`),
      api<{ id: string; url: string }[]>('GET', `${base}/webhooks`),
    ]);
    setRoutes(r);
    setMessages(m);
    setHooks(w);
  };
  const { notice, error, setError, run } = useOutcome(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [base]);
  const add = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const v = valueIn(form);
    const action = v('action') as Route['action'];
    const body =
      action === 'webhook'
        ? { pattern: v('pattern'), action, webhook_id: v('webhook_id') }
        : action === 'forward'
          ? {
              pattern: v('pattern'),
              action,
              forward_to: (v('forward_to') ?? '')
                .split(',')
                .map((a) => a.trim())
                .filter(Boolean),
            }
          : { pattern: v('pattern'), action };
    void run(async () => {
      await api('POST', `${base}/routes`, body);
      form.reset();
      return 'Route added.';
    });
  };
  const remove = (r: Route) => {
    if (!confirm(`Delete the route ${r.pattern}? Its addresses are refused from then on.`)) return;
    void run(async () => {
      await api('DELETE', `${base}/routes/${r.id}`);
      return 'Route deleted.';
    });
  };
  return (
    <main>
      <h1>Inbound</h1>
      <p>
        Mail for a receiving domain's addresses goes where its route says; any other address is refused. Turn receiving
        on for a domain on the Domains page.
      </p>
      <Outcome notice={notice} error={error} />
      <h2>Routes</h2>
      {routes?.length === 0 && <p>No route yet.</p>}
      {routes && routes.length > 0 && (
        <table>
          <Head cols={['Pattern', 'Goes to']} actions={mayWrite(role)} />
          <tbody>
            {routes.map((r) => (
              <tr>
                <td>{r.pattern}</td>
                <td>{targetOf(r)}</td>
                {mayWrite(role) && (
                  <td>
                    <button type="button" class="secondary" onClick={() => remove(r)}>
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {mayWrite(role) && (
        <form class="route-form" onSubmit={add}>
          <label>
            Pattern
            <input
              name="pattern"
              required
              maxLength={320}
              placeholder="support@example.com, reply+*@example.com or *@example.com"
            />
          </label>
          <label>
            Action
            <select name="action">
              <option value="webhook">POST to a webhook</option>
              <option value="forward">Forward</option>
              <option value="hold">Hold for the API</option>
            </select>
          </label>
          <label>
            Webhook (for POST)
            <select name="webhook_id">
              {hooks.map((w) => (
                <option value={w.id}>{w.url}</option>
              ))}
            </select>
          </label>
          <label>
            Forward to (comma-separated, for Forward)
            <input name="forward_to" maxLength={2000} />
          </label>
          <p>
            <button type="submit">Add route</button>
          </p>
        </form>
      )}
      <h2>Received</h2>
      {messages?.length === 0 && <p>Nothing received yet.</p>}
      {messages && messages.length > 0 && (
        <table>
          <Head cols={['Received (UTC)', 'From', 'To', 'Subject', 'Outcome', 'Authentication']} />
          <tbody>
            {messages.map((m) => (
              <tr>
                <td>
                  <a href={pageHref(org, project, `inbound/${m.id}`)}>{when(m.received_at)}</a>
                </td>
                <td>{m.from ?? m.envelope.mail_from ?? ''}</td>
                <td>{m.envelope.rcpt_to.join(', ')}</td>
                <td>{m.subject}</td>
                <td>{outcomeOf(m)}</td>
                <td>{authOf(m)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

function ReceivedView({ org, project, id, role }: PageProps) {
  const path = `${projectPath({ org, project })}/received-emails/${id}`;
  const [m, setM] = useState<ReceivedDetail>();
  const load = () => api<ReceivedDetail>('GET', path).then(setM);
  const { notice, error, setError, run } = useOutcome(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [path]);
  const fetchFile = (url: string, name: string) =>
    void run(async () => {
      save(await download(url), name);
      return undefined;
    });
  const remove = () => {
    if (!confirm('Delete this message?')) return;
    void run(async () => {
      await api('DELETE', path);
      location.hash = pageHref(org, project, 'inbound');
      return undefined;
    });
  };
  if (!m) return <Pending error={error} />;
  return (
    <main>
      <p>
        <a href={pageHref(org, project, 'inbound')}>← Inbound</a>
      </p>
      <h1>{m.subject || '(no subject)'}</h1>
      <p>
        From {m.from ?? m.envelope.mail_from ?? '(unknown)'} to {m.envelope.rcpt_to.join(', ')}, received{' '}
        {when(m.received_at)} from {m.envelope.remote_ip ?? '?'}. {outcomeOf(m)}
        {m.detail ? ` (${m.detail})` : ''}.
      </p>
      <p>{authOf(m)}</p>
      <Outcome notice={notice} error={error} />
      <p>
        <button type="button" class="secondary" onClick={() => fetchFile(`${path}/raw`, `${m.id}.eml`)}>
          Download the message
        </button>
        {mayWrite(role) && (
          <button type="button" class="secondary" onClick={remove}>
            Delete
          </button>
        )}
      </p>
      {m.attachments.length > 0 && (
        <ul>
          {m.attachments.map((a) => (
            <li>
              <button
                type="button"
                class="link"
                onClick={() => fetchFile(`${path}/attachments/${a.index}`, a.filename ?? `attachment-${a.index}`)}
              >
                {a.filename ?? `attachment ${a.index}`}
              </button>{' '}
              ({a.content_type}, {a.size} bytes)
            </li>
          ))}
        </ul>
      )}
      <h2>Reply text</h2>
      <pre class="received-text">{m.reply_text ?? '(no text part)'}</pre>
      <details>
        <summary>Whole text</summary>
        <pre class="received-text">{m.text ?? ''}</pre>
      </details>
    </main>
  );
}
