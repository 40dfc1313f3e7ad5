import type { NewEmail } from '../../src/emails/repo.ts';

/**
 * An email as the accept writes it, for the store tests: a LIVE, QUEUED text email with no
 * copies, tags or attachments, and its `queued` event; `over` sets what a test varies.
 */
export function newEmail(id: string, over: Partial<NewEmail> = {}): NewEmail {
  return {
    id,
    project_id: 'p1',
    api_key_id: null,
    env: 'LIVE',
    source: 'API',
    status: 'QUEUED',
    from_email: 'news@example.com',
    from_name: null,
    to: [],
    cc: null,
    bcc: null,
    reply_to: null,
    subject: 's',
    tags: [],
    headers: {},
    html: null,
    text: 'x',
    template_id: null,
    template_version: null,
    created_at: '2026-11-26T12:00:00.000Z',
    attachments: [],
    event: { id: `ev-${id}`, type: 'queued', data: {} },
    ...over,
  };
}
