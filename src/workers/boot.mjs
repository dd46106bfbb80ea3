// Piscina worker entry: registers the TypeScript loader in this thread before loading the tasks
// (piscina's own worker bootstrap imports the task module before --import hooks apply).
import { register } from 'tsx/esm/api';

register();
const tasks = await import('./tasks.ts');
export const settle = tasks.settle;
export const parseAppend = tasks.parseAppend;
export const parseGrpcAppend = tasks.parseGrpcAppend;
export const verifySegments = tasks.verifySegments;
export const settleBytes = tasks.settleBytes;
