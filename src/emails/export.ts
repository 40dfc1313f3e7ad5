import type { Readable } from 'node:stream';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { csvStream } from '../lib/csv.ts';
import { LIMITS } from '../limits/index.ts';
import { searchQuerySchema } from './schema.ts';
import type { EmailsService } from './service.ts';

/** The dashboard's list query: its search filters, plus `format=csv` for an export of every match. */
export const dashboardListQuerySchema = searchQuerySchema.extend({ format: z.enum(['json', 'csv']).default('json') });

/** The columns of an export, in order; lists (recipients, tags) are joined with ", ". */
export const CSV_COLUMNS = [
  'id',
  'created_at',
  'status',
  'from_email',
  'to_emails',
  'subject',
  'tags',
  'sent_at',
  'delivered_at',
  'bounce_type',
  'bounce_category',
  'bounce_rule',
  'final_smtp_code',
  'final_smtp_text',
  'message_id',
  'source',
] as const;

type Item = Record<string, unknown>;

/** Exports of a project's emails (the dashboard's CSV), a page at a time on top of the list use case. */
export function createEmailsExport(emails: Pick<EmailsService, 'search'>) {
  /** Every email matching `filters`, newest first, fetched LIMITS.listMax at a time with the `before` cursor. */
  async function* listAll(projectId: string, filters: Record<string, unknown>): AsyncGenerator<Item[]> {
    let before: string | undefined;
    for (;;) {
      const page = await emails.search(projectId, { ...filters, limit: LIMITS.listMax, ...(before ? { before } : {}) });
      if (page.length) yield page;
      if (page.length < LIMITS.listMax) return;
      before = page.at(-1)!.id as string;
    }
  }

  return {
    listAll,

    /**
     * The CSV of every email matching the list filters: a header row, then one
     * row per email, produced a page at a time so that a large project is
     * streamed, not held. Paging parameters (limit, before, after) are refused:
     * an export has no pages. Validates before the first chunk is produced.
     */
    async csv(projectId: string, query: Record<string, unknown>): Promise<Readable> {
      const paging = ['limit', 'before', 'after'].filter((k) => query[k] !== undefined);
      if (paging.length) {
        throw new AppError('request_validation_failed', 'The request failed validation', {
          fields: paging.map((field) => ({ field, message: 'is not used with format=csv', code: 'unrecognized_keys' })),
        });
      }
      const pages = listAll(projectId, query);
      // The first page is read here, so a bad filter is a 422 and not a broken stream.
      const first = await pages.next();
      return csvStream(
        CSV_COLUMNS,
        (async function* () {
          if (first.done) return;
          yield* first.value.map(toRow);
          for await (const page of pages) yield* page.map(toRow);
        })(),
      );
    },
  };
}

function toRow(e: Item): unknown[] {
  return CSV_COLUMNS.map((c) => {
    const v = e[c];
    return Array.isArray(v) ? v.join(', ') : (v ?? '');
  });
}

export type EmailsExport = ReturnType<typeof createEmailsExport>;
