// nftlink's logger: structured fields, one JSON object per line. A small interface so the engine
// and the API client do not depend on the logging library; the CLI wires in pino (pino-logger.ts).

export type LogFields = Record<string, unknown>;

export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  /** The most detailed level (-v 5 and more); optional for loggers that have none. */
  trace?(msg: string, fields?: LogFields): void;
}

export const silentLogger: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
