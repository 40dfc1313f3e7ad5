// The project's webhooks: the endpoints, and one endpoint with its deliveries.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorLine, messageOf, mayWrite, pageHref, valueIn, when, type PageProps } from '../ui.tsx';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  is_active: boolean;
  auto_disabled: boolean;
  created_at: string;
  secret?: string;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: string;
  http_status: number | null;
  duration_ms: number | null;
  error: string | null;
  request_body: string;
  response_body: string | null;
  created_at: string;
  next_attempt_at: string | null;
}
/** The names a subscription takes (the API refuses any other); `*` is every one. */
const EVENTS = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'failed',
  'simulated',
];
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'];
/** Attempts per page of a webhook's deliveries. */
const DELIVERIES_PAGE = 25;

const stateOf = (w: Webhook) => (w.is_active ? 'active' : w.auto_disabled ? 'disabled after failures' : 'paused');

/** The events ticked in a form: `*` when "every event" is, else each ticked name. */
function eventsIn(form: HTMLFormElement): string[] {
  const ticked = [...form.querySelectorAll<HTMLInputElement>('input[name="events"]:checked')].map((i) => i.value);
  return ticked.includes('*') ? ['*'] : ticked;
}

/**
 * Runs a write, then shows what it says in the status line or the API's refusal, and reloads.
 * Shared with the templates page; a candidate for ui.tsx with its like in org-parts.tsx.
 */
export function useAction(reload: () => Promise<unknown>) {
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  async function act(work: () => Promise<string | undefined>) {
    try {
      const said = await work();
      setNotice(said);
      setError(undefined);
      await reload();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  }
  return { notice, error, setError, act };
}

/** A write's outcome, read out to screen readers. */
export function Notice({ text }: { text: string | undefined }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
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
          {name === '*' ? 'every event' : name}
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
  const { notice, error, setError, act } = useAction(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [path]);
  const create = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void act(async () => {
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
      <Notice text={notice} />
      <ErrorLine error={error} />
      {hooks?.length === 0 && <p>No endpoint yet.</p>}
      {hooks && hooks.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Created (UTC)</th>
            </tr>
          </thead>
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
  const { notice, error, setError, act } = useAction(load);
  useEffect(() => void load().catch((e: unknown) => setError(messageOf(e))), [path]);
  const save = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const active = (form.elements.namedItem('is_active') as HTMLInputElement).checked;
    void act(async () => {
      await api('PATCH', path, { url: valueIn(form)('url'), events: eventsIn(form), is_active: active });
      return 'Saved.';
    });
  };
  const rotate = () => {
    if (!confirm('Rotate the signing secret? The current one stops working at once.')) return;
    void act(async () => {
      setSecret((await api<{ secret: string }>('POST', `${path}/rotate-secret`)).secret);
      return undefined;
    });
  };
  const test = () =>
    void act(async () => {
      const r = await api<{ success: boolean; http_status: number; error: string | null }>('POST', `${path}/test`);
      const status = r.http_status ? `HTTP ${r.http_status}` : 'no HTTP answer';
      return `Test ping ${r.success ? 'succeeded' : 'failed'}: ${status}${r.error ? `, ${r.error}` : ''}.`;
    });
  const remove = () => {
    if (!hook || !confirm(`Delete the endpoint ${hook.url}? Its deliveries go with it.`)) return;
    void act(async () => {
      await api('DELETE', path);
      location.hash = pageHref(org, project, 'webhooks');
      return undefined;
    });
  };
  if (!hook)
    return (
      <main aria-busy={!error}>
        <ErrorLine error={error} />
      </main>
    );
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
      <Notice text={notice} />
      <ErrorLine error={error} />
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

function Deliveries(props: {
  org: string;
  project: string;
  id: string;
  query: URLSearchParams;
  writer: boolean;
  attempts: number;
  onRedelivered: () => void;
}) {
  const { org, project, id, query } = props;
  const path = `/v1/organizations/${org}/projects/${project}/webhooks/${id}/deliveries`;
  const status = query.get('status') ?? '';
  const offset = Number(query.get('offset') ?? 0) || 0;
  const open = query.get('delivery') ?? '';
  const [rows, setRows] = useState<Delivery[]>();
  const [error, setError] = useState<string>();
  const hrefOf = (q: Record<string, string | number>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ status, ...q })) if (v) next.set(k, String(v));
    return pageHref(org, project, `webhooks/${id}`, next);
  };
  const load = () => {
    const q = new URLSearchParams({ limit: String(DELIVERIES_PAGE), offset: String(offset) });
    if (status) q.set('status', status);
    return api<Delivery[]>('GET', `${path}?${q.toString()}`).then(setRows, (e: unknown) => setError(messageOf(e)));
  };
  useEffect(() => void load(), [path, status, offset, props.attempts]);
  const filter = (e: Event) => {
    e.preventDefault();
    location.hash = hrefOf({ status: valueIn(e.currentTarget as HTMLFormElement)('status') });
  };
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries</h2>
      <form class="filters" role="search" onSubmit={filter}>
        <label>
          With status
          <select name="status" value={status}>
            <option value="">Any</option>
            {DELIVERY_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
        <button type="button" class="secondary" onClick={() => void load()}>
          Refresh
        </button>
      </form>
      <ErrorLine error={error} />
      {rows?.length === 0 && <p>No delivery{status ? ` with status ${status}` : ''}.</p>}
      {rows && rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">HTTP</th>
              <th scope="col">At (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr aria-current={d.id === open ? 'true' : undefined}>
                <td>
                  <a href={hrefOf({ offset, delivery: d.id })}>
                    {d.event_type} <span class="visually-hidden">attempt {d.attempt}</span>
                  </a>
                </td>
                <td>{d.attempt}</td>
                <td>{d.status}</td>
                <td>{d.http_status ?? '–'}</td>
                <td>{when(d.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pages" aria-label="Pages of deliveries">
        {offset > 0 && <a href={hrefOf({ offset: Math.max(0, offset - DELIVERIES_PAGE) })}>Newer</a>}
        {rows?.length === DELIVERIES_PAGE && <a href={hrefOf({ offset: offset + DELIVERIES_PAGE })}>Older</a>}
      </nav>
      {open && <DeliveryView path={`${path}/${open}`} writer={props.writer} onRedelivered={props.onRedelivered} />}
    </section>
  );
}

/** One attempt: what was sent and what came back, and redeliver. */
function DeliveryView({ path, writer, onRedelivered }: { path: string; writer: boolean; onRedelivered: () => void }) {
  const [d, setD] = useState<Delivery>();
  const { notice, error, setError, act } = useAction(() => Promise.resolve(onRedelivered()));
  useEffect(() => {
    api<Delivery>('GET', path).then(setD, (e: unknown) => setError(messageOf(e)));
  }, [path]);
  const redeliver = () =>
    void act(async () => {
      await api('POST', `${path}/redeliver`);
      return 'Redelivery queued: the new attempt is listed once it is made.';
    });
  return (
    <section class="delivery" aria-labelledby="delivery-heading">
      <h3 id="delivery-heading">{d ? `${d.event_type}, attempt ${d.attempt}` : 'Delivery'}</h3>
      <Notice text={notice} />
      <ErrorLine error={error} />
      {d && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd>{d.status}</dd>
            <dt>HTTP status</dt>
            <dd>{d.http_status ?? 'none'}</dd>
            <dt>Duration</dt>
            <dd>{d.duration_ms === null ? '–' : `${d.duration_ms} ms`}</dd>
            <dt>Error</dt>
            <dd>{d.error ?? 'none'}</dd>
            <dt>Event id</dt>
            <dd>
              <code>{d.event_id}</code>
            </dd>
            {d.next_attempt_at && (
              <>
                <dt>Next attempt (UTC)</dt>
                <dd>{when(d.next_attempt_at)}</dd>
              </>
            )}
          </dl>
          {writer && (
            <p>
              <button type="button" onClick={redeliver}>
                Redeliver
              </button>
            </p>
          )}
          <h4>Request payload</h4>
          <pre class="text">{pretty(d.request_body)}</pre>
          <h4>Response</h4>
          <pre class="text">{d.response_body ?? '(no response body)'}</pre>
        </>
      )}
    </section>
  );
}

/** JSON indented for reading; anything else as it is. */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
