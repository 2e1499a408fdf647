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
// The inputAck gate's matching is input-ack.ts's; both parse a line once through a LineJson.
import type { TurnEndMatcher } from '../../protocol/v1/launch-spec.ts';
import { LineJson, OPEN_BRACE, valueAt, type OutputStream } from './output-line.ts';

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
