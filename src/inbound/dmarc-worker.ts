/**
 * The piscina worker that reads DMARC aggregate reports: it unpacks (zlib, fflate) and parses
 * (fast-xml-parser) a report message off the main thread, where a 16 MiB report took seconds
 * during which the server answered nothing else. It receives the message's bytes and returns
 * the plain result (the report, or why it was refused); it never opens the database. Loaded
 * by Node as this .ts file in development and tests, and as dmarc-worker.js in the bundle.
 */
import { parentPort } from 'node:worker_threads';
import { taskStarted } from '../lib/task-started.ts';
import type { Parsed } from './dmarc-parse.ts';
import { readAggregateReport } from './dmarc-read.ts';

export interface ReadTask {
  /** Echoed in the start message, so the reader's time limit counts from here. */
  id: number;
  raw: Uint8Array;
}

/** Reads one report message; a bad report is an answer ({ ok: false, reason }), not an exception. */
export default async function readReportTask(task: ReadTask): Promise<Parsed> {
  // Worker start-up and queueing are not the report's time: its limit counts from here.
  parentPort?.postMessage(taskStarted(task.id));
  return readAggregateReport(Buffer.from(task.raw.buffer, task.raw.byteOffset, task.raw.byteLength));
}
