export { createTopReader, type EmailDetail, type Snapshot } from './repo.ts';
export { createTopService, type TopService } from './service.ts';
export { formatSnapshot } from './format.ts';
export { parseFilterText } from './filter.ts';
export { readerSource, type TopSource } from './source.ts';
export type { TopStore } from './store.ts';
