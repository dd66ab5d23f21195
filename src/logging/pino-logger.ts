// The Logger on pino: one JSON object per line on stderr. kube-proxy's -v levels map onto
// pino's: up to 3 info, 4 debug, 5 and more trace (every rule the sync writes is traced).

import pino from 'pino';
import type { LogFields, Logger } from './logger.js';

export function verbosityLevel(v: number): 'info' | 'debug' | 'trace' {
  return v >= 5 ? 'trace' : v >= 4 ? 'debug' : 'info';
}

export function pinoLogger(verbosity: number, destination: NodeJS.WritableStream = process.stderr): Logger {
  const log = pino({ level: verbosityLevel(verbosity), base: { component: 'nftlink-proxy' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  return {
    error: (msg, fields) => log.error(fields ?? {}, msg),
    warn: (msg, fields) => log.warn(fields ?? {}, msg),
    info: (msg, fields) => log.info(fields ?? {}, msg),
    debug: (msg, fields) => log.debug(fields ?? {}, msg),
    // Only at the trace level: callers test for it before building what only a trace shows (the
    // text of every transaction).
    ...(log.isLevelEnabled('trace') ? { trace: (msg: string, fields?: LogFields) => log.trace(fields ?? {}, msg) } : {}),
  };
}
