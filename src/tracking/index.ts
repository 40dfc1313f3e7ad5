export { createTrackingRepo } from './repo.ts';
export type { TrackingEvent, TrackingStore, UnsubscribeOutcome } from './store.ts';
export { createTrackingService, type TrackingService } from './service.ts';
export type { TrackingSettings, Visitor } from './schema.ts';
