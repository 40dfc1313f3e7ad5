// One webhook's deliveries: the attempts, filtered by status and paged, and one attempt with the
// request it sent and the response it got, and redeliver.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Head, ErrorLine, messageOf, pageHref, valueIn, when, useOutcome, Outcome } from '../ui.tsx';

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
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'];
/** Attempts per page of a webhook's deliveries. */
const DELIVERIES_PAGE = 25;

/** The attempts of webhook `id`, newest first; `?delivery=` opens one, `?status=` and `?offset=` filter and page. */
export function Deliveries(props: {
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
          <Head cols={['Event', 'Attempt', 'Status', 'HTTP', 'At (UTC)']} />
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
  const { notice, error, setError, run } = useOutcome(() => Promise.resolve(onRedelivered()));
  useEffect(() => {
    api<Delivery>('GET', path).then(setD, (e: unknown) => setError(messageOf(e)));
  }, [path]);
  const redeliver = () =>
    void run(async () => {
      await api('POST', `${path}/redeliver`);
      return 'Redelivery queued: the new attempt is listed once it is made.';
    });
  return (
    <section class="delivery" aria-labelledby="delivery-heading">
      <h3 id="delivery-heading">{d ? `${d.event_type}, attempt ${d.attempt}` : 'Delivery'}</h3>
      <Outcome notice={notice} error={error} />
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
