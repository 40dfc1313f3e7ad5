// One email: its fields, events, parts (the HTML in a sandboxed frame) and resend.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { emailsHref, ErrorLine, messageOf, mayWrite, when, type PageProps } from '../ui.tsx';
import type { EmailItem } from './emails.tsx';

interface EmailEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  timestamp: string;
}
interface EmailDetail extends EmailItem {
  cc_emails: string[] | null;
  bcc_emails: string[] | null;
  text_body: string | null;
  html_body: string | null;
  headers: Record<string, string>;
  events: EmailEvent[];
}

export function EmailView({ org, project, id, role }: PageProps) {
  const [email, setEmail] = useState<EmailDetail>();
  const [error, setError] = useState<string>();
  async function resend() {
    try {
      const sent = await api<{ id: string }>(
        'POST',
        `/v1/organizations/${org}/projects/${project}/emails/${id}/resend`,
      );
      location.hash = `#/o/${org}/p/${project}/emails/${sent.id}`;
    } catch (e) {
      setError(messageOf(e));
    }
  }
  useEffect(() => {
    api<EmailDetail>('GET', `/v1/organizations/${org}/projects/${project}/emails/${id}`).then(setEmail, (e: unknown) =>
      setError(messageOf(e)),
    );
  }, [org, project, id]);
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
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <span class={`status status-${email.status.toLowerCase()}`}>{email.status}</span>
        </dd>
        <dt>From</dt>
        <dd>{email.from_email}</dd>
        <dt>To</dt>
        <dd>{email.to_emails.join(', ')}</dd>
        {email.cc_emails?.length ? (
          <>
            <dt>Cc</dt>
            <dd>{email.cc_emails.join(', ')}</dd>
          </>
        ) : null}
        <dt>Created (UTC)</dt>
        <dd>{when(email.created_at)}</dd>
        <dt>Id</dt>
        <dd>
          <code>{email.id}</code>
        </dd>
      </dl>
      <h2>Events</h2>
      <ol class="events">
        {email.events.map((ev) => (
          <li>
            <strong>{ev.type}</strong> <time dateTime={ev.timestamp}>{when(ev.timestamp)}</time>
            {Object.keys(ev.data).length > 0 && (
              <dl>
                {Object.entries(ev.data).map(([k, v]) => (
                  <>
                    <dt>{k}</dt>
                    <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                  </>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
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
