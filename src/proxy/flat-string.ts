// Keys the proxy keeps for as long as it runs (object keys, service port ids, origins), made as one
// flat string. A template literal makes a chain of V8 cons strings, and the first hash of one (as a
// Map key) adds a flat copy beside the chain, both kept: at 10k services about 3 MB for the
// manifest source's keys and origins alone.

/** The parts as one flat string (Array.prototype.join builds one; `+` and templates do not). */
export function flat(...parts: (string | number)[]): string {
  return parts.join('');
}
