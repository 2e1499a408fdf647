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
import type { TurnEndMatcher } from '../protocol/v1/launch-spec.ts';

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
const NOT_PARSED: unique symbol = Symbol('not-parsed');

export function compileTurnEnd(matchers: readonly TurnEndMatcher[]): CompileResult {
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
    let parsed: unknown = NOT_PARSED;
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
      if (parsed === NOT_PARSED) parsed = parseOrUndefined(line);
      if (parsed !== undefined && valueAt(parsed, c.path) === c.equals) return true;
    }
    return false;
  };
  return { ok: true, test };
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
