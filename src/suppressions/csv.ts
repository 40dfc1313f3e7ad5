import type { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { csvStream } from '../lib/csv.ts';
import { AppError } from '../errors.ts';
import type { Suppression } from './schema.ts';

/** A data line of an import: its fields, or why it could not be read as a row. */
export type CsvRow = { line: number; email: string; reason?: string | undefined } | { line: number; error: string };

/**
 * Reads a suppression CSV (a header naming `email`, optionally `reason`) as
 * rows with their line numbers, from a file or a request body, without
 * holding it in memory. A row that is not well-formed CSV (a field count
 * unlike the header's, a stray quote) comes out as an error row and the rest
 * is still read; a header without `email` refuses the whole file (422).
 */
export async function* readSuppressionCsv(input: Readable): AsyncGenerator<CsvRow> {
  const skipped: CsvRow[] = [];
  const parser = input.pipe(
    parse({
      columns: (header: string[]) => {
        const names = header.map((c) => c.trim().toLowerCase());
        if (!names.includes('email')) {
          throw new AppError('request_validation_failed', 'The CSV header must name an "email" column', {
            header: names,
          });
        }
        return names;
      },
      skip_empty_lines: true,
      trim: true,
      info: true,
      bom: true,
      skip_records_with_error: true,
      on_skip: (err) => {
        if (err) skipped.push({ line: lineOf(err), error: err.message });
        return undefined;
      },
    }),
  );
  input.on('error', (e) => parser.destroy(e));
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Record<string, string>;
      info: { lines: number };
    }>) {
      yield* skipped.splice(0);
      yield { line: info.lines, email: record.email ?? '', reason: record.reason };
    }
    yield* skipped.splice(0);
  } catch (e) {
    yield* skipped.splice(0);
    if (e instanceof AppError || !(e instanceof CsvError)) throw (e as { cause?: unknown }).cause ?? e;
    // A quote never closed runs to the end of the file: that row, and nothing after it, is lost.
    yield { line: lineOf(e), error: e.message };
  }
}

function lineOf(err: CsvError): number {
  return typeof err.lines === 'number' ? err.lines : 0;
}

/** The list as CSV (`email,reason,created_at`), streamed. */
export function writeSuppressionCsv(entries: AsyncIterable<Suppression>): Readable {
  return csvStream(['email', 'reason', 'created_at'], entries);
}
