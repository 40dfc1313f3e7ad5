import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';

/**
 * `rows` as CSV under a header of `columns`, written as they are read, never
 * held whole (the exports of suppressions, audit logs and emails). A row is
 * an array in column order or an object keyed by column. Cells a spreadsheet
 * would run as a formula (starting with = + - @) are escaped.
 */
export function csvStream(columns: readonly string[], rows: AsyncIterable<unknown>): Readable {
  const csv = stringify({ header: true, columns: [...columns], escape_formulas: true });
  return pipeline(Readable.from(rows), csv, () => {});
}
