// Compiles a launch spec's declarative turn-end matchers into one function the
// supervisor calls per complete output line. Owns matching only; which lines
// count as complete (not a `cont` piece) and what a match does is the supervisor's.
//
// - Compiled once per launch: regexes are built here, never per line.
// - A json matcher parses a line only if it starts with `{` (cheap guard for
//   non-JSON output), at most once per line however many json matchers there are,
//   then compares the value at `path` with `equals` using ===.
// - Invalid regex source is reported by compileTurnEnd, not thrown per line.
// - A `prefix` matcher also sees the first piece of a line longer than the line
//   cap (`whole: false`); json and regex matchers only ever see whole lines.
// - The inputAck gate (compileInputAck) is matching too: which stdin lines name
//   an id, which output lines acknowledge one. Counting what is pending and
//   holding the turn end back is the supervisor's. It shares the turnEnd test's
//   parse of a line through a LineJson.
import type { InputAck, TurnEndMatcher } from '../../protocol/v1/launch-spec.ts';

export type OutputStream = 'stdout' | 'stderr';
/**
 * True when the line ends the turn. `whole: false` means `line` is only the
 * first piece of a line the bridge split (longer than the cap): then only
 * prefix matchers are asked, and the caller ends the turn with the line's last piece.
 */
export type TurnEndTest = (stream: OutputStream, line: string, whole?: boolean) => boolean;

export type CompileResult = { ok: true; test: TurnEndTest | null } | { ok: false; message: string };

type Compiled =
  | { stream: OutputStream; kind: 'json'; path: readonly string[]; equals: string | number | boolean | null }
  | { stream: OutputStream; kind: 'regex'; re: RegExp }
  | { stream: OutputStream; kind: 'prefix'; prefix: string };

const OPEN_BRACE = 0x7b;

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

export function compileTurnEnd(matchers: readonly TurnEndMatcher[], json: LineJson = new LineJson()): CompileResult {
  const compiled: Compiled[] = [];
  for (const [i, m] of matchers.entries()) {
    const stream = m.stream ?? 'stdout';
    if (m.json) compiled.push({ stream, kind: 'json', path: m.json.path, equals: m.json.equals });
    if (m.regex !== undefined) {
      let re: RegExp;
      try {
        re = new RegExp(m.regex);
      } catch (err) {
        return { ok: false, message: `turnEnd[${i}].regex is not a valid regular expression: ${(err as Error).message}` };
      }
      compiled.push({ stream, kind: 'regex', re });
    }
    if (m.prefix !== undefined) compiled.push({ stream, kind: 'prefix', prefix: m.prefix });
  }
  if (compiled.length === 0) return { ok: true, test: null };

  const test: TurnEndTest = (stream, line, whole = true) => {
    for (const c of compiled) {
      if (c.stream !== stream) continue;
      if (c.kind === 'prefix') {
        if (line.startsWith(c.prefix)) return true;
        continue;
      }
      if (!whole) continue;
      if (c.kind === 'regex') {
        if (c.re.test(line)) return true;
        continue;
      }
      if (line.charCodeAt(0) !== OPEN_BRACE) continue;
      const parsed = json.get(line);
      if (parsed !== undefined && valueAt(parsed, c.path) === c.equals) return true;
    }
    return false;
  };
  return { ok: true, test };
}

/** A launch's inputAck, compiled: the ids a stdin write names, and the id an output line acknowledges. */
export type InputAckTest = {
  /** The ids named by the JSON object lines of one stdin write (in order; may be empty). */
  inputIds(text: string): string[];
  /** The id a complete output line acknowledges, or undefined. */
  ackedId(stream: OutputStream, line: string): string | undefined;
};

export function compileInputAck(spec: InputAck, json: LineJson = new LineJson()): InputAckTest {
  const stream = spec.stream ?? 'stdout';
  const when = spec.when ?? [];
  const idAt = (value: unknown, path: readonly string[]) => {
    const id = valueAt(value, path);
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  };
  return {
    inputIds(text) {
      const ids: string[] = [];
      for (let line of text.split('\n')) {
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line.charCodeAt(0) !== OPEN_BRACE) continue;
        const id = idAt(parseOrUndefined(line), spec.inputId);
        if (id !== undefined) ids.push(id);
      }
      return ids;
    },
    ackedId(lineStream, line) {
      if (lineStream !== stream || line.charCodeAt(0) !== OPEN_BRACE) return undefined;
      const parsed = json.get(line);
      if (parsed === undefined) return undefined;
      for (const c of when) if (valueAt(parsed, c.path) !== c.equals) return undefined;
      return idAt(parsed, spec.ackId);
    },
  };
}

function parseOrUndefined(line: string): unknown {
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
