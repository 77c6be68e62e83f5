// The executor's decision (record before ack): what every transport does with a delivery.
export { completeOutput } from "./complete-output.js";
export type {
  Delivery,
  DeliveryHandler,
  DeliveryHandlerOptions,
  ExecuteCounter,
  ExecuteMetrics,
} from "./delivery.js";
export { RECORD_RETRY_MAX_MS, RECOVERY_GRACE_MS } from "./delivery.js";
export { createDeliveryHandler } from "./execute-delivery.js";
