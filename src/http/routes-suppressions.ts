import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import {
  addSuppressionSchema,
  listSuppressionsQuerySchema,
  readSuppressionCsv,
  writeSuppressionCsv,
} from '../suppressions/index.ts';
import { parseInput } from '../validation.ts';
import * as out from './management-schemas.ts';
import { memberHandler, sendCsv } from './org-route.ts';

/** A project's suppression list, from the dashboard, with its CSV export and import. */

/** What a CSV import answers: the count taken, and each refused line with its reason. */
const importResultOut = z.object({
  imported: z.number().int(),
  invalid: z.array(z.object({ line: z.number().int(), email: z.string(), message: z.string() })),
});

/** A CSV import body may be larger than a JSON request: it is streamed, never held whole. */
const CSV_IMPORT_BYTES = 256 * 1024 * 1024;

/** A CSV import streams its body to the use case; every other body is JSON. */
export function acceptCsvBodies(server: FastifyInstance): void {
  server.addContentTypeParser('text/csv', { bodyLimit: CSV_IMPORT_BYTES }, (_req, payload, done) =>
    done(null, payload),
  );
}

export const listSuppressions = memberHandler(
  {
    summary:
      'The suppression list in address order, or the addresses matching `q` and `reason` (`format=csv` streams all of them)',
    query: listSuppressionsQuerySchema,
    response: z.array(out.suppressionOut),
    csv: true,
  },
  async ({ params, query, reply }, app) => {
    const q = parseInput(listSuppressionsQuerySchema, query);
    const pid = params.project_id!;
    const filter = { contains: q.q, reason: q.reason };
    if (q.format === 'csv') {
      return sendCsv(reply, 'suppressions.csv', writeSuppressionCsv(app.suppressions.iterate(pid, filter)));
    }
    return app.suppressions.list(pid, q.limit, q.after, filter);
  },
);

export const addSuppression = memberHandler(
  { summary: 'Suppress an address', body: addSuppressionSchema, response: out.suppressionOut },
  ({ params, body, actor }, app) => app.suppressions.add(params.project_id!, body as never, actor),
);

export const removeSuppression = memberHandler({ summary: 'Send to an address again' }, ({ params, actor }, app) =>
  app.suppressions.remove(params.project_id!, params.email!, actor),
);

export const importSuppressions = memberHandler(
  {
    summary: 'Import a CSV (`email[,reason]` header; Content-Type text/csv); refused lines are listed',
    response: importResultOut,
    csvBody: true,
  },
  ({ params, body, actor }, app) => {
    if (!isStream(body)) {
      throw new AppError('request_validation_failed', 'Send the CSV as the body with Content-Type: text/csv');
    }
    return app.suppressions.importRows(params.project_id!, readSuppressionCsv(body), undefined, actor);
  },
);

function isStream(v: unknown): v is Readable {
  return typeof v === 'object' && v !== null && typeof (v as Readable).pipe === 'function';
}
