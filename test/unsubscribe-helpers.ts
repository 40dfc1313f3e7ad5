import { count, type TestEnv } from './harness.ts';

// What the one-click unsubscribe suites (unsubscribe*.test.ts) share: reading a delivered
// message's headers, the POST a mailbox provider sends, and what an unsubscribe wrote.

/** A header of a message as received, unfolded (undefined when absent). */
export function headOf(raw: Buffer): (name: string) => string | undefined {
  const head = raw
    .subarray(0, raw.indexOf('\r\n\r\n'))
    .toString()
    .replace(/\r\n[ \t]+/g, ' ');
  return (name) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];
}

/** The POST a mailbox provider sends (RFC 8058 section 3.2). */
export const oneClick = (env: TestEnv, token: string) =>
  env.server.inject({
    method: 'POST',
    url: `/u/${token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });

/** The suppression list's entry for `email` in the env's project (none: []). */
export const suppressed = (env: TestEnv, email: string) =>
  env.query<{ reason: string; source_email_id: string }>(
    'SELECT reason, source_email_id FROM suppressions WHERE project_id = ? AND email = ?',
    env.init.project_id,
    email,
  );

/** How many `unsubscribed` events the email has. */
export const unsubscribedEvents = (env: TestEnv, id: string) =>
  count(env, 'email_events', "type = 'unsubscribed' AND email_seq = (SELECT seq FROM emails WHERE id = ?)", id);
