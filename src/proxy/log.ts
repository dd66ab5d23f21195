// The proxy's logger: structured, one JSON object per line (kube-proxy's -v levels map onto these).
// A small interface so the engine does not depend on the logging library; cli wires in pino.

export type LogFields = Record<string, unknown>;

export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
}

const LEVELS = { error: 50, warn: 40, info: 30, debug: 20 } as const;

/** JSON lines on stderr at or above `level`. */
export function jsonLogger(level: keyof typeof LEVELS = 'info', out: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = LEVELS[level];
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: LogFields): void => {
    if (LEVELS[lvl] < min) return;
    out(`${JSON.stringify({ level: lvl, time: new Date().toISOString(), msg, ...fields })}\n`);
  };
  return {
    error: (m, f) => write('error', m, f),
    warn: (m, f) => write('warn', m, f),
    info: (m, f) => write('info', m, f),
    debug: (m, f) => write('debug', m, f),
  };
}

export const silentLogger: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
