/**
 * What main.ts runs, in one module that it imports once its early signal listeners are in place
 * (early-signals.ts): everything main.ts needs but the types.
 */
export { default as cluster } from 'node:cluster';
export { build } from '../apps/app.js';
export { parseCommand, runCommand } from '../apps/cli.js';
export { ListenError, listenAs } from '../apps/listen.js';
export { ConfigError, configFromSources, describeConfig, readConfigSources } from '../config/config.js';
export { reopenAccessLogs } from '../observe/access-log.js';
export { createLogger } from '../observe/logging.js';
export { runPrimary } from './primary.js';
export { runSingle } from './single.js';
export { configFromPrimary } from './worker-config.js';
export { CLUSTER_WORKER_MARK } from './worker-env.js';
export { answerPrimary, handOverFinalMetrics, siblingsOverIpc, tellStartFailed } from './worker-side.js';
