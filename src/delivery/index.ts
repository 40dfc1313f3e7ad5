export type { DeliveryEngine, SigningKeys } from './engine.ts';
export { createDeliveryRepo, EXPLAIN_SQL, QUEUE_STATS_SQL, waitingLine, type QueueRecipient } from './repo.ts';
export type { DeliveryStore } from './store.ts';
export { nextAttemptAt } from './schedule.ts';
export {
  RETURN_PATH_SECRET,
  parseReturnPath,
  returnPathAddress,
  returnPathCovers,
  returnPathsIn,
  type ReturnPath,
} from './return-path.ts';
export { basicCodeOf, classifyReply, type BounceCategory } from './classify.ts';
export type { Decision } from './outcome.ts';
export { PG_EXPLAIN_SQL } from './repo-pg.ts';
export { recipientTimelines, recipientTimelineSchema, type RecipientTimeline } from './timeline.ts';
export { createStoredStsPolicies } from './mta-sts.ts';
export { createResolver } from './mx.ts';
export { probeDane } from './dane.ts';
export { createDnssecResolver } from './dnssec-resolver.ts';
