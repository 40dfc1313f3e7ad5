// One sending domain: its DNS records with their live state, copy buttons, verify now, DKIM
// rotation, sending from it in the current project, its DKIM keys and its DMARC aggregate reports.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { mayAdmin, orgPath, pageHref, projectPath, when, type PageProps, Head, Outcome, useOutcome } from '../ui.tsx';

interface DnsRecord {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  purpose: string;
}
interface RecordCheck extends Omit<DnsRecord, 'value'> {
  ok: boolean;
  reason: string | null;
  found: string[];
}
export interface Domain {
  id: string;
  name: string;
  status: 'PENDING' | 'VERIFIED' | 'FAILED';
  dkim_keys: { selector: string; algorithm: string; state: string; activated_at: string | null }[];
  records: DnsRecord[];
  checks: RecordCheck[];
  warning: string | null;
  last_checked_at: string | null;
  verified_at: string | null;
  project_ids: string[];
  receiving: boolean;
  receiving_ready: boolean;
}
interface ReportDay {
  day: string;
  source_ip: string;
  count: number;
  spf_pass: number;
  dkim_pass: number;
  dmarc_pass: number;
  flagged: boolean;
  reporters: string[];
}

/** The latest check of a record, as the API reports it. */
function stateOf(r: DnsRecord, checks: RecordCheck[]): string {
  const c = checks.find((x) => x.type === r.type && x.name === r.name && x.purpose === r.purpose);
  if (!c) return 'not checked yet';
  return c.ok ? 'found' : `not found${c.reason ? `: ${c.reason}` : ''}`;
}

/**
 * Copies `text` to the clipboard; where the browser refuses (no permission, not a secure
 * origin), selects the element's text so that the user copies it.
 */
async function copy(text: string, el: HTMLElement): Promise<string> {
  try {
    await navigator.clipboard.writeText(text);
    return 'Copied.';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(el);
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    return 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}

function Records({ domain, onCopy }: { domain: Domain; onCopy: (text: string, el: HTMLElement) => void }) {
  return (
    <table class="records">
      <Head cols={['Type', 'Name', 'Value', 'State']} />
      <tbody>
        {domain.records.map((r, i) => {
          const state = stateOf(r, domain.checks);
          return (
            <tr>
              <td>{r.type}</td>
              <td>
                <code>{r.name}</code> <span class="purpose">({r.purpose})</span>
              </td>
              <td>
                <code class="record-value" id={`value-${i}`}>
                  {r.value}
                </code>
                <button
                  type="button"
                  class="secondary copy"
                  onClick={() => onCopy(r.value, document.getElementById(`value-${i}`)!)}
                >
                  Copy <span class="visually-hidden">the value of {r.name}</span>
                </button>
              </td>
              <td class={state === 'found' ? 'check-ok' : 'check-missing'}>{state}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Reports({ days }: { days: ReportDay[] }) {
  return (
    <table>
      <Head
        cols={['Day', 'Source IP', 'Messages', 'SPF pass', 'DKIM pass', 'DMARC pass', 'Reported by']}
        actions={false}
      />
      <tbody>
        {days.map((d) => (
          <tr class={d.flagged ? 'flagged' : undefined}>
            <td>{d.day}</td>
            <td>
              {d.source_ip}
              {d.flagged && <strong> (not svc, failing DMARC)</strong>}
            </td>
            <td>{d.count}</td>
            <td>{d.spf_pass}</td>
            <td>{d.dkim_pass}</td>
            <td>{d.dmarc_pass}</td>
            <td>{d.reporters.join(', ')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One domain of the organization (its id is the route's). */
export function DomainView({ org, project, id, role }: PageProps) {
  const path = `${orgPath({ org })}/domains/${id}`;
  const admin = mayAdmin(role);
  const [domain, setDomain] = useState<Domain>();
  const [days, setDays] = useState<ReportDay[]>([]);
  const { notice, error, run } = useOutcome();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void run(async () => void setDomain(await api<Domain>('GET', path)));
    // The reports are read where any exist; a domain without them shows no such section.
    void api<ReportDay[]>('GET', `${path}/reports`).then(setDays, () => setDays([]));
  }, [path]);
  /** An action on the domain; it answers the domain as it now is, else (an unbinding) it is read again. */
  async function act(method: 'POST' | 'DELETE' | 'PATCH', to: string, done: (d: Domain) => string, body?: unknown) {
    setBusy(true);
    await run(async () => {
      const d = (await api<Domain | undefined>(method, to, body)) ?? (await api<Domain>('GET', path));
      setDomain(d);
      return done(d);
    });
    setBusy(false);
  }
  const verify = () =>
    void act('POST', `${path}/verify`, (d) =>
      d.status === 'VERIFIED' ? `${d.name} is verified.` : `${d.name} is ${d.status}: see each record's state.`,
    );
  const rotate = () => {
    if (!confirm('Rotate the DKIM keys? Publish the new records; the new keys sign once they are seen.')) return;
    void act('POST', `${path}/rotate-dkim`, () => 'New DKIM keys are made: publish their records, then verify.');
  };
  const bound = domain?.project_ids.includes(project) ?? false;
  const bind = () =>
    void act(bound ? 'DELETE' : 'POST', `${projectPath({ org, project })}/domains/${id}`, (d) =>
      bound ? `This project no longer sends from ${d.name}.` : `This project sends from ${d.name} once it is verified.`,
    );
  const receive = () =>
    void act(
      'PATCH',
      path,
      (d) =>
        d.receiving
          ? `${d.name} receives mail for its routes (Inbound) once its MX points here.`
          : `${d.name} no longer receives mail.`,
      { receiving: !domain?.receiving },
    );
  return (
    <main>
      <p>
        <a href={pageHref(org, project, 'domains')}>All domains</a>
      </p>
      <h1>{domain?.name ?? 'Domain'}</h1>
      <Outcome notice={notice} error={error} />
      {domain && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd class={`status status-${domain.status.toLowerCase()}`}>{domain.status}</dd>
            <dt>This project</dt>
            <dd>{bound ? 'sends from it' : 'does not send from it'}</dd>
            <dt>Receiving</dt>
            <dd>
              {domain.receiving
                ? domain.receiving_ready
                  ? 'on, its MX points here'
                  : 'on, its MX not seen yet'
                : 'off'}
            </dd>
            <dt>Last checked (UTC)</dt>
            <dd>{domain.last_checked_at ? when(domain.last_checked_at) : 'never'}</dd>
            {domain.warning && (
              <>
                <dt>Warning</dt>
                <dd>{domain.warning}</dd>
              </>
            )}
          </dl>
          {admin && (
            <p class="actions">
              <button type="button" disabled={busy} onClick={verify}>
                Verify now
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={rotate}>
                Rotate DKIM keys
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={bind}>
                {bound ? 'Stop sending from it in this project' : 'Send from it in this project'}
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={receive}>
                {domain.receiving ? 'Stop receiving mail' : 'Receive mail'}
              </button>
            </p>
          )}
          <h2>DNS records</h2>
          <Records domain={domain} onCopy={(text, el) => void run(() => copy(text, el))} />
          <h2>DKIM keys</h2>
          <ul>
            {domain.dkim_keys.map((k) => (
              <li>
                <code>{k.selector}</code> {k.algorithm}, {k.state}
              </li>
            ))}
          </ul>
          {days.length > 0 && (
            <>
              <h2>DMARC reports</h2>
              <Reports days={days} />
            </>
          )}
        </>
      )}
    </main>
  );
}
