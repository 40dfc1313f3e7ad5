export { createDeliveryEngine, type DeliveryEngine, type SigningKeys } from './engine.ts';
export { createDeliveryRepo, type DeliveryRepo, type QueueRecipient } from './repo.ts';
export { nextAttemptAt } from './schedule.ts';
