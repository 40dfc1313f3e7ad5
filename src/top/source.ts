import type { TopFilter } from './filter.ts';
import type { EmailDetail, Snapshot } from './repo.ts';
import type { TopStore } from './store.ts';

/** Where svc top reads: the data dir (the whole server) or a server's `GET /v1/top` (one project). */
export interface TopSource {
  /** What is read, for the view's header. */
  label: string;
  snapshot(filter: TopFilter): Promise<Snapshot>;
  /** An email's events and standing; null when there is none. */
  detail(emailId: string): Promise<EmailDetail | null>;
}

export function readerSource(reader: TopStore, label: string): TopSource {
  return {
    label,
    snapshot: (filter) => reader.snapshot(filter),
    detail: (id) => reader.detail(id),
  };
}
