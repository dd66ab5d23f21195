// Names from objects go into log lines and problem reports before anything has vetted them: a name
// with a newline or a NUL byte must not forge or cut a line.

/** The text as it is when it is printable ASCII; else quoted, with its bad characters escaped. */
export function printable(text: string): string {
  return /^[\x21-\x7e]*$/.test(text) ? text : JSON.stringify(text);
}
