export { createOpsMetrics, type OpsMetrics, type OpsSource } from './ops.ts';
