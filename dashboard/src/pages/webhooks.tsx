// The project's webhooks: the endpoints, and one endpoint with its deliveries.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import {
  Head,
  Pending,
  messageOf,
  mayWrite,
  pageHref,
  valueIn,
  when,
  type PageProps,
  useOutcome,
  Outcome,
} from '../ui.tsx';
import { Deliveries } from './webhook-deliveries.tsx';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  is_active: boolean;
  auto_disabled: boolean;
  created_at: string;
  secret?: string;
}
/**
 * The names a subscription takes (the API refuses any other: src/events/index.ts WEBHOOK_EVENTS,
 * then RESOURCE_EVENTS); `*` is every email event, and the domain and suppression events are
 * ticked by name.
 */
const EVENTS = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'delivery_delayed',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'failed',
  'simulated',
  'unsubscribed',
  'canceled',
  'domain.verification_changed',
  'suppression.added',
  'suppression.removed',
];

const stateOf = (w: Webhook) => (w.is_active ? 'active' : w.auto_disabled ? 'disabled after failures' : 'paused');

/** The events ticked in a form: `*` when "every event" is, else each ticked name. */
function eventsIn(form: HTMLFormElement): string[] {
  const ticked = [...form.querySelectorAll<HTMLInputElement>('input[name="events"]:checked')].map((i) => i.value);
  return ticked.includes('*') ? ['*'] : ticked;
}

/** A created or rotated secret, shown this once. */
function SecretNotice({ secret, what }: { secret: string | undefined; what: string }) {
  return secret ? (
    <div class="notice" role="status">
      <p>{what}, shown this once: copy it now.</p>
      <code class="secret">{secret}</code>
    </div>
  ) : null;
}

function EventChoices({ chosen }: { chosen: readonly string[] }) {
  return (
    <fieldset class="webhook-events">
      <legend>Events</legend>
      {['*', ...EVENTS].map((name) => (
        <label class="check">
          <input type="checkbox" name="events" value={name} defaultChecked={chosen.includes(name)} />
          {name === '*' ? 'every email event' : name}
        </label>
      ))}
    </fieldset>
  );
}

/** The endpoints, or one endpoint (`id`). */
export function Webhooks(props: PageProps) {
  return props.id ? <WebhookView {...props} /> : <WebhookList {...props} />;
}

function WebhookList({ org, project, role }: PageProps) {
  const path = `/v1/organizations/${org}/projects/${project}/webhooks`;
  const [hooks, setHooks] = useState<Webhook[]>();
  const [created, setCreated] = useState<Webhook>();
  const load = () => api<Webhook[]>('GET', path).then(setHooks);
  const { notice, error, setError, run } = useOutcome(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [path]);
  const create = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      setCreated(undefined);
      const w = await api<Webhook>('POST', path, { url: valueIn(form)('url'), events: eventsIn(form) });
      setCreated(w);
      form.reset();
      return undefined;
    });
  };
  return (
    <main>
      <h1>Webhooks</h1>
      {mayWrite(role) && (
        <form class="webhook-form" onSubmit={create}>
          <label>
            Endpoint URL (HTTPS)
            <input name="url" type="url" required maxLength={2048} placeholder="https://" />
          </label>
          <EventChoices chosen={['*']} />
          <p>
            <button type="submit">Add endpoint</button>
          </p>
        </form>
      )}
      <SecretNotice secret={created?.secret} what={`The signing secret of ${created?.url ?? ''}`} />
      <Outcome notice={notice} error={error} />
      {hooks?.length === 0 && <p>No endpoint yet.</p>}
      {hooks && hooks.length > 0 && (
        <table>
          <Head cols={['Endpoint', 'Events', 'State', 'Created (UTC)']} />
          <tbody>
            {hooks.map((w) => (
              <tr>
                <td>
                  <a href={pageHref(org, project, `webhooks/${w.id}`)}>{w.url}</a>
                </td>
                <td>{w.events.join(', ')}</td>
                <td>{stateOf(w)}</td>
                <td>{when(w.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

function WebhookView({ org, project, id, query, role }: PageProps) {
  const path = `/v1/organizations/${org}/projects/${project}/webhooks/${id}`;
  const writer = mayWrite(role);
  const [hook, setHook] = useState<Webhook>();
  const [secret, setSecret] = useState<string>();
  // Bumped by a write that adds an attempt, so the deliveries are read again.
  const [attempts, setAttempts] = useState(0);
  const load = () => api<Webhook>('GET', path).then(setHook);
  const { notice, error, setError, run } = useOutcome(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [path]);
  const save = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const active = (form.elements.namedItem('is_active') as HTMLInputElement).checked;
    void run(async () => {
      await api('PATCH', path, { url: valueIn(form)('url'), events: eventsIn(form), is_active: active });
      return 'Saved.';
    });
  };
  const rotate = () => {
    if (!confirm('Rotate the signing secret? The current one stops working at once.')) return;
    void run(async () => {
      setSecret((await api<{ secret: string }>('POST', `${path}/rotate-secret`)).secret);
      return undefined;
    });
  };
  const test = () =>
    void run(async () => {
      const r = await api<{ success: boolean; http_status: number; error: string | null }>('POST', `${path}/test`);
      const status = r.http_status ? `HTTP ${r.http_status}` : 'no HTTP answer';
      return `Test ping ${r.success ? 'succeeded' : 'failed'}: ${status}${r.error ? `, ${r.error}` : ''}.`;
    });
  const remove = () => {
    if (!hook || !confirm(`Delete the endpoint ${hook.url}? Its deliveries go with it.`)) return;
    void run(async () => {
      await api('DELETE', path);
      location.hash = pageHref(org, project, 'webhooks');
      return undefined;
    });
  };
  if (!hook) return <Pending error={error} />;
  return (
    <main>
      <p>
        <a href={pageHref(org, project, 'webhooks')}>← Webhooks</a>
      </p>
      <h1>{hook.url}</h1>
      <p>
        Events: {hook.events.join(', ')}. State: {stateOf(hook)}.
      </p>
      {writer && (
        <p class="webhook-actions">
          <button type="button" onClick={test}>
            Send test
          </button>
          <button type="button" class="secondary" onClick={rotate}>
            Rotate secret
          </button>
          <button type="button" class="secondary" onClick={remove}>
            Delete endpoint
          </button>
        </p>
      )}
      <SecretNotice secret={secret} what="The new signing secret" />
      <Outcome notice={notice} error={error} />
      {writer && (
        <details>
          <summary>Edit the endpoint</summary>
          <form class="webhook-form" key={hook.id} onSubmit={save}>
            <label>
              Endpoint URL (HTTPS)
              <input name="url" type="url" required maxLength={2048} defaultValue={hook.url} />
            </label>
            <EventChoices chosen={hook.events} />
            <label class="check">
              <input type="checkbox" name="is_active" defaultChecked={hook.is_active} />
              Active
            </label>
            <p>
              <button type="submit">Save</button>
            </p>
          </form>
        </details>
      )}
      <Deliveries {...{ org, project, id, query, writer, attempts }} onRedelivered={() => setAttempts((n) => n + 1)} />
    </main>
  );
}
