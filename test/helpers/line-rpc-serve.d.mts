// Types of line-rpc-serve.mjs.
export function serveCommands(commands: Record<string, (command: Record<string, unknown>) => unknown>): void;
