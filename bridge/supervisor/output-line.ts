// One CLI output line as the turnEnd and inputAck matchers read it: the stream it came from, its
// JSON parsed at most once for both (LineJson), and values at a path in it (valueAt). What the
// matchers do with a line is turn-end-matcher.ts's and input-ack.ts's.

export type OutputStream = 'stdout' | 'stderr';

export const OPEN_BRACE = 0x7b;

/**
 * A line parsed at most once for all of a launch's json checks: the supervisor
 * asks the turnEnd test and the inputAck check about the same line in a row,
 * then calls forget() so no parsed line outlives its turn of the loop.
 */
export class LineJson {
  #line: string | null = null;
  #value: unknown = undefined;

  /** The line parsed as JSON, or undefined (not starting with `{`, or not JSON). */
  get(line: string): unknown {
    if (line !== this.#line) {
      this.#line = line;
      this.#value = line.charCodeAt(0) === OPEN_BRACE ? parseOrUndefined(line) : undefined;
    }
    return this.#value;
  }

  forget(): void {
    this.#line = null;
    this.#value = undefined;
  }
}

export function parseOrUndefined(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    // Not JSON after all (e.g. a log line starting with `{`): no json matcher can match it.
    return undefined;
  }
}

/** The value at `path` (object keys; array indexes as decimal strings), or undefined. */
export function valueAt(value: unknown, path: readonly string[]): unknown {
  let cur = value;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
