// One object's or expression's attribute list as the compact format's reader found it: where each
// attribute's bytes lie in the reply buffer, by attribute id. The values are read from the buffer
// in place (attr-values.ts); a view is made only for a caller that asks for the bytes themselves.
// A view per attribute (a typed array object of its own in V8's heap) was most of what decoding a
// dump allocated: a 10k-service table has about 20k objects of six or so attributes each.

export class WireAttrs {
  /**
   * @param buf the reply buffer
   * @param spans attribute `id`'s bytes are buf[spans[2 id], spans[2 id] + spans[2 id + 1]); an
   *   absent attribute is a hole
   */
  constructor(
    readonly buf: Uint8Array,
    private readonly spans: readonly number[],
  ) {}

  /** Where attribute `id`'s bytes start in `buf`, or -1 when the list lacks it. */
  at(id: number): number {
    const at = this.spans[2 * id];
    return at === undefined ? -1 : at;
  }

  /** How many bytes attribute `id` has (0 when the list lacks it). */
  length(id: number): number {
    return this.spans[2 * id + 1] ?? 0;
  }

  /** A list of the given attributes (a caller that builds a WireExpr itself, as tests do). */
  static of(attrs: readonly (readonly [id: number, bytes: Uint8Array])[]): WireAttrs {
    const buf = new Uint8Array(attrs.reduce((n, [, bytes]) => n + bytes.length, 0));
    const spans: number[] = [];
    let at = 0;
    for (const [id, bytes] of attrs) {
      buf.set(bytes, at);
      spans[2 * id] = at;
      spans[2 * id + 1] = bytes.length;
      at += bytes.length;
    }
    return new WireAttrs(buf, spans);
  }

  /** A view of attribute `id`'s bytes (it pins the reply buffer while it lives). */
  view(id: number): Uint8Array | undefined {
    const at = this.spans[2 * id];
    return at === undefined ? undefined : this.buf.subarray(at, at + this.spans[2 * id + 1]!);
  }

  /** A copy of attribute `id`'s bytes: for values a decoded object keeps. */
  copy(id: number): Uint8Array | undefined {
    const at = this.spans[2 * id];
    return at === undefined ? undefined : this.buf.slice(at, at + this.spans[2 * id + 1]!);
  }

  /** Every attribute present, by increasing id, each with a copy of its bytes. */
  copies(): [number, Uint8Array][] {
    const out: [number, Uint8Array][] = [];
    for (let id = 0; 2 * id < this.spans.length; id++) {
      const bytes = this.copy(id);
      if (bytes) out.push([id, bytes]);
    }
    return out;
  }
}
