// Compiles a launch's inputAck (lifetime 'session'): which stdin lines name an input id, and
// which output lines acknowledge one. Matching only: counting what is pending and holding the
// turn end back is the supervisor's. It shares the turnEnd test's parse of a line (LineJson).
import type { InputAck } from '../../protocol/v1/launch-spec.ts';
import { LineJson, OPEN_BRACE, parseOrUndefined, valueAt, type OutputStream } from './output-line.ts';

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
