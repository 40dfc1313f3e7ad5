export { createTrackingRepo, type TrackingRepo } from './repo.ts';
export { createTrackingService, type TrackingService } from './service.ts';
export type { TrackingSettings, Visitor } from './schema.ts';
