// Reading emails: the Public API's list, search and views of one email (its events and
// attachments), and the operator's view of any project's email (CLI).
import { AppError } from '../errors.ts';
import { isUuid } from '../lib/ids.ts';
import { parseInput } from '../validation.ts';
import type { Attachment } from './content.ts';
import { toEmailDetail, toEmailListItem, toEventPublic } from './present.ts';
import { readRawView } from './raw-view.ts';
import type { EmailRow, EmailsStore } from './store.ts';
import { listQuerySchema, searchQuerySchema } from './schema.ts';

type ReadStore = Pick<EmailsStore, 'findById' | 'list' | 'listEvents' | 'listAttachmentInfo' | 'listAttachments'>;

/** The email `id` of `projectId` (of any project when null); not_found otherwise. */
export async function getEmailRow(repo: Pick<EmailsStore, 'findById'>, projectId: string | null, id: string) {
  const row = isUuid(id) ? await repo.findById(id) : undefined;
  if (!row || (projectId !== null && row.project_id !== projectId)) throw new AppError('not_found', `no email ${id}`);
  return row;
}

/** A row with the text and HTML of its stored message, for one passed through as written (raw-view.ts). */
async function withView(row: EmailRow): Promise<EmailRow> {
  if (!row.raw_message) return row;
  const view = await readRawView(row.raw_message as Buffer);
  return { ...row, html_body: view.html, text_body: view.text };
}

export function createEmailReads(repo: ReadStore) {
  const getRow = (projectId: string | null, id: string) => getEmailRow(repo, projectId, id);
  return {
    /** Newest first, with the contract's filters and before/after cursors. */
    async list(projectId: string, query: unknown) {
      const q = parseInput(listQuerySchema, query);
      return (await repo.list(projectId, q)).map(toEmailListItem);
    },

    /** The dashboard's list: the contract's filters plus subject, source and API key (issue 31). */
    async search(projectId: string, query: unknown) {
      const q = parseInput(searchQuerySchema, query);
      return (await repo.list(projectId, q)).map(toEmailListItem);
    },

    async get(projectId: string, id: string) {
      return toEmailDetail(await withView(await getRow(projectId, id)));
    },

    async events(projectId: string, id: string) {
      const row = await getRow(projectId, id);
      return (await repo.listEvents(row.seq)).map(toEventPublic);
    },

    /** The email's attachments without their content, for the dashboard's email view; none after body retention. */
    async attachments(projectId: string, id: string) {
      const row = await getRow(projectId, id);
      if (!row.raw_message) return repo.listAttachmentInfo(row.seq);
      return (await readRawView(row.raw_message as Buffer)).attachments.map(
        ({ filename, content_type, size, content_id }) => ({ filename, content_type, size, content_id }),
      );
    },

    /**
     * One attachment of the email with its content, by its position (0 first), for the
     * dashboard's download; not_found when there is none there (or body retention dropped it).
     */
    async attachment(projectId: string, id: string, position: number): Promise<Attachment> {
      const row = await getRow(projectId, id);
      const all = row.raw_message
        ? (await readRawView(row.raw_message as Buffer)).attachments
        : await repo.listAttachments(row.seq);
      const found = all[position];
      if (!found)
        throw new AppError('not_found', 'The email has no attachment there (body retention may have dropped it)');
      return found;
    },

    /** Operator view (CLI): an email of any project. */
    async getAny(id: string) {
      return toEmailDetail(await withView(await getRow(null, id)));
    },

    async eventsAny(id: string) {
      return (await repo.listEvents((await getRow(null, id)).seq)).map(toEventPublic);
    },
  };
}
