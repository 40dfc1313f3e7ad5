// One email: its fields, each recipient's delivery (every attempt, the MX host, the reply, the
// rule that decided, why it waits), opens and clicks, events, headers, attachments, its parts
// (the HTML in a sandboxed frame) and resend.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, download } from '../api.ts';
import {
  Head,
  emailsHref,
  ErrorLine,
  messageOf,
  mayWrite,
  Outcome,
  projectPath,
  save,
  useOutcome,
  when,
  type PageProps,
} from '../ui.tsx';
import type { EmailItem } from './emails.tsx';

interface EmailEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  timestamp: string;
}
interface Attempt {
  attempt: number;
  at: string;
  ended_at: string | null;
  mx_host: string | null;
  outcome: 'sending' | 'retry' | 'delivered' | 'bounced' | 'failed';
  reply: string | null;
}
interface RecipientTimeline {
  address: string;
  kind: 'to' | 'cc' | 'bcc';
  status: string;
  domain: string;
  attempts: Attempt[];
  mx_host: string | null;
  smtp_code: number | null;
  smtp_enhanced: string | null;
  smtp_text: string | null;
  bounce_type: string | null;
  bounce_category: string | null;
  bounce_rule: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  next_attempt_at: string | null;
  waiting: string[];
  throttle: { concurrency: number; paused_until: string | null; reason: string } | null;
}
interface AttachmentInfo {
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
}
interface EmailDetail extends EmailItem {
  cc_emails: string[] | null;
  bcc_emails: string[] | null;
  reply_to: string[] | null;
  message_id?: string | null;
  /** When a scheduled send goes out (decisions.md, "Scheduled sending"). */
  scheduled_at?: string | null;
  /** The send's key/value pairs (decisions.md, "Metadata"). */
  metadata?: Record<string, string> | null;
  text_body: string | null;
  html_body: string | null;
  headers: Record<string, string>;
  events: EmailEvent[];
  recipients: RecipientTimeline[];
  attachments: AttachmentInfo[];
}

/** How often the view reads the email again while a recipient still waits or is being tried. */
const LIVE_MS = 5000;
const OUTCOMES: Record<Attempt['outcome'], string> = {
  sending: 'under way',
  retry: 'deferred',
  delivered: 'delivered',
  bounced: 'bounced',
  failed: 'failed',
};

const pending = (e: EmailDetail) => e.recipients.some((r) => r.status === 'QUEUED' || r.status === 'SENDING');
const lower = (s: string) => s.toLowerCase();

/** A size in bytes as people read it. */
function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** A term and its value, left out when there is no value. */
function Field({ term, value }: { term: string; value: ComponentChildren }) {
  if (value === null || value === undefined || value === '') return null;
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}

function Status({ status }: { status: string }) {
  return <span class={`status status-${lower(status)}`}>{status}</span>;
}

function Attempts({ r }: { r: RecipientTimeline }) {
  if (r.attempts.length === 0) return <p class="muted">No delivery attempt yet.</p>;
  return (
    <div class="table-scroll">
      <table class="attempts">
        <caption>Attempts for {r.address}</caption>
        <Head cols={['#', 'Started (UTC)', 'MX host', 'Outcome', 'Reply']} />
        <tbody>
          {r.attempts.map((a) => (
            <tr key={`${a.attempt}-${a.at}`}>
              <td>{a.attempt}</td>
              <td>
                <time dateTime={a.at}>{when(a.at)}</time>
              </td>
              <td>{a.mx_host ?? '—'}</td>
              <td>
                <span class={`outcome outcome-${a.outcome}`}>{OUTCOMES[a.outcome]}</span>
              </td>
              <td>{a.reply ? <code>{a.reply}</code> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One recipient: where it stands, the reply and rule that decided it, why it waits, its attempts. */
function Recipient({ r, n }: { r: RecipientTimeline; n: number }) {
  // By position: two addresses may differ only in characters an id cannot hold.
  const headingId = `recipient-${n}`;
  const reply = [r.smtp_code, r.smtp_enhanced, r.smtp_text].filter((x) => x !== null && x !== '').join(' ');
  const throttle = r.throttle
    ? `throttled: at most ${r.throttle.concurrency} connections at once${
        r.throttle.paused_until ? `, paused until ${when(r.throttle.paused_until)}` : ''
      } (${r.throttle.reason})`
    : 'not throttled';
  return (
    <section class="recipient" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {r.address} <span class="kind">{r.kind}</span> <Status status={r.status} />
      </h3>
      <dl class="fields">
        <Field term="Destination" value={`${r.domain}, ${throttle}`} />
        <Field term="MX host" value={r.mx_host} />
        <Field term="Last reply" value={reply ? <code>{reply}</code> : null} />
        <Field term="Bounce" value={r.bounce_type ? `${r.bounce_type}` : null} />
        <Field term="Category" value={r.bounce_category} />
        <Field term="Decided by" value={r.bounce_rule} />
        <Field term="Sent (UTC)" value={r.sent_at && when(r.sent_at)} />
        <Field term="Delivered (UTC)" value={r.delivered_at && when(r.delivered_at)} />
        <Field term="Next attempt (UTC)" value={r.next_attempt_at && when(r.next_attempt_at)} />
        <Field
          term="Why it waits"
          value={
            r.waiting.length > 0 ? (
              <ul class="waiting">
                {r.waiting.map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            ) : null
          }
        />
      </dl>
      <Attempts r={r} />
    </section>
  );
}

/** Opens and clicks, from the email's events (tracking records them for the whole email). */
function Engagement({ events }: { events: EmailEvent[] }) {
  const opens = events.filter((e) => e.type === 'opened');
  const clicks = events.filter((e) => e.type === 'clicked');
  return (
    <>
      <h2>Opens and clicks</h2>
      <p>
        {opens.length} {opens.length === 1 ? 'open' : 'opens'}
        {opens[0] ? `, first at ${when(opens[0].timestamp)} UTC` : ''}; {clicks.length}{' '}
        {clicks.length === 1 ? 'click' : 'clicks'}
      </p>
      {clicks.length > 0 && (
        <ul class="clicks">
          {clicks.map((c) => (
            <li key={c.id}>
              <time dateTime={c.timestamp}>{when(c.timestamp)}</time>{' '}
              <code>{typeof c.data.url === 'string' ? c.data.url : ''}</code>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Headers({ headers }: { headers: Record<string, string> }) {
  const entries = Object.entries(headers);
  return (
    <>
      <h2>Headers</h2>
      {entries.length === 0 ? (
        <p class="muted">No custom headers.</p>
      ) : (
        <dl class="fields headers">
          {entries.map(([name, value]) => (
            <Field key={name} term={name} value={<code>{value}</code>} />
          ))}
        </dl>
      )}
    </>
  );
}

/** The email's attachments; each is saved as a file (the server never lets one render). */
function Attachments({ attachments, path }: { attachments: AttachmentInfo[]; path: string }) {
  const [error, setError] = useState<string>();
  const saveOne = (i: number, name: string) =>
    download(`${path}/attachments/${i}`).then(
      (blob) => save(blob, name),
      (e: unknown) => setError(messageOf(e)),
    );
  return (
    <>
      <h2>Attachments</h2>
      {attachments.length === 0 ? (
        <p class="muted">No attachments (or their content was dropped by body retention).</p>
      ) : (
        <div class="table-scroll">
          <table class="attachments">
            <Head cols={['Name', 'Type', 'Size']} actions />
            <tbody>
              {attachments.map((a, i) => (
                <tr key={i}>
                  <td>{a.filename}</td>
                  <td>
                    <code>{a.content_type}</code>
                  </td>
                  <td>{bytes(a.size)}</td>
                  <td>
                    <button type="button" class="secondary" onClick={() => void saveOne(i, a.filename)}>
                      Download <span class="visually-hidden">{a.filename}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorLine error={error} />
    </>
  );
}

/**
 * A scheduled email that has not started may be cancelled or moved (decisions.md, "Scheduled
 * sending"): the API's 409 email_not_changeable says when it is too late.
 */
function ScheduleControls({ path, run }: { path: string; run: ReturnType<typeof useOutcome>['run'] }) {
  const cancel = () =>
    confirm('Cancel this scheduled email? It will not be sent.') &&
    void run(async () => {
      await api('POST', `${path}/cancel`);
      return 'Cancelled: the email will not be sent.';
    });
  const move = (e: Event) => {
    e.preventDefault();
    const at = (e.currentTarget as HTMLFormElement).elements.namedItem('scheduled_at') as HTMLInputElement;
    void run(async () => {
      const moved = await api<{ scheduled_at: string }>('PATCH', path, { scheduled_at: at.value });
      return `Rescheduled for ${when(moved.scheduled_at)} UTC.`;
    });
  };
  return (
    <section aria-label="Schedule">
      <form onSubmit={move}>
        <label>
          New time <input name="scheduled_at" required placeholder="2026-12-01T09:00:00Z or in 2 hours" size={32} />
        </label>{' '}
        <button type="submit">Reschedule</button>{' '}
        <button type="button" onClick={cancel}>
          Cancel the send
        </button>
      </form>
    </section>
  );
}

export function EmailView(props: PageProps) {
  const { org, project, id, role } = props;
  const [email, setEmail] = useState<EmailDetail>();
  const [error, setError] = useState<string>();
  async function resend() {
    try {
      const sent = await api<{ id: string }>('POST', `${projectPath(props)}/emails/${id}/resend`);
      location.hash = `#/o/${org}/p/${project}/emails/${sent.id}`;
    } catch (e) {
      setError(messageOf(e));
    }
  }
  const load = () =>
    api<EmailDetail>('GET', `${projectPath(props)}/emails/${id}`).then(setEmail, (e: unknown) =>
      setError(messageOf(e)),
    );
  useEffect(() => {
    setEmail(undefined);
    void load();
  }, [org, project, id]);
  // A cancel or a move: its line stays once the email no longer offers them.
  const changed = useOutcome(load);
  // While a recipient waits or is being tried, the view follows it.
  const live = email !== undefined && pending(email);
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => void load(), LIVE_MS);
    return () => clearInterval(timer);
  }, [live, org, project, id]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!email) return <main aria-busy="true" />;
  return (
    <main>
      <p>
        <a href={emailsHref(org, project)}>← Emails</a>
      </p>
      <h1>{email.subject || '(no subject)'}</h1>
      {mayWrite(role) && (
        <p>
          <button type="button" onClick={() => void resend()}>
            Resend
          </button>
        </p>
      )}
      {mayWrite(role) && email.status === 'QUEUED' && email.scheduled_at && (
        <ScheduleControls path={`${projectPath(props)}/emails/${id}`} run={changed.run} />
      )}
      <Outcome notice={changed.notice} error={changed.error} />
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <Status status={email.status} />
        </dd>
        <dt>From</dt>
        <dd>{email.from_email}</dd>
        <dt>To</dt>
        <dd>{email.to_emails.join(', ')}</dd>
        <Field term="Cc" value={email.cc_emails?.join(', ')} />
        <Field term="Bcc" value={email.bcc_emails?.join(', ')} />
        <Field term="Reply-To" value={email.reply_to?.join(', ')} />
        <Field term="Tags" value={email.tags.join(', ')} />
        <Field term="Source" value={email.source} />
        <dt>Created (UTC)</dt>
        <dd>{when(email.created_at)}</dd>
        <Field term="Scheduled (UTC)" value={email.scheduled_at && when(email.scheduled_at)} />
        <Field
          term="Metadata"
          value={
            email.metadata &&
            Object.entries(email.metadata)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')
          }
        />
        <Field term="Message-ID" value={email.message_id && <code>{email.message_id}</code>} />
        <dt>Id</dt>
        <dd>
          <code>{email.id}</code>
        </dd>
      </dl>
      <h2>Recipients</h2>
      {email.recipients.map((r, n) => (
        <Recipient key={r.address} r={r} n={n} />
      ))}
      <Engagement events={email.events} />
      <h2>Events</h2>
      <ol class="events">
        {email.events.map((ev) => (
          <li key={ev.id}>
            <strong>{ev.type}</strong> <time dateTime={ev.timestamp}>{when(ev.timestamp)}</time>
            {Object.keys(ev.data).length > 0 && (
              <dl>
                {Object.entries(ev.data).map(([k, v]) => (
                  <Field key={k} term={k} value={typeof v === 'string' ? v : JSON.stringify(v)} />
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
      <Headers headers={email.headers} />
      <Attachments attachments={email.attachments} path={`${projectPath(props)}/emails/${id}`} />
      {email.html_body !== null && (
        <>
          <h2>HTML</h2>
          {/* No scripts, no same origin: the email cannot reach the dashboard or its session. */}
          <iframe class="preview" title="HTML part" sandbox="" srcdoc={email.html_body} />
        </>
      )}
      {email.text_body !== null && (
        <>
          <h2>Text</h2>
          <pre class="text">{email.text_body}</pre>
        </>
      )}
    </main>
  );
}
