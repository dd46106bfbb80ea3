// Entry point of every piscina worker: one named export per task kind.
export { default as settle, settleBytes } from './settle-task.ts';
export { parseAppend, parseGrpcAppend } from './parse-task.ts';
export { verifySegments } from './verify-task.ts';
