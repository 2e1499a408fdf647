import { describe, expect, it } from 'vitest';
import { parseRecording, type RecordingLine } from '../../protocol/recording/recording-format.ts';

const header = JSON.stringify({
  type: 'recording-header',
  format: 'harness-bridge-recording',
  version: 1,
  startedAt: 1_767_225_600_000,
  url: 'ws://127.0.0.1:1/',
  protocolVersion: '1.0',
  cursor: 0,
});
const recording = (...lines: object[]) => [header, ...lines.map((line) => JSON.stringify(line))].join('\n') + '\n';

describe('parseRecording: event lines', () => {
  it('keeps the listed fields, typed and in file order; drops unknown fields; accepts unknown events', () => {
    const lines = parseRecording(
      recording(
        { dir: 'event', t: 1, event: 'disconnect', reason: 'socket closed (1006)', cursor: 3, closeCode: 1006, futureField: 'x' },
        { dir: 'event', t: 2, event: 'terminal', code: 'displaced', message: 'another host', cursor: 3 },
        { dir: 'event', t: 3, event: 'a-future-event', attempt: 2 },
      ),
    ).slice(1) as RecordingLine[];
    expect(lines).toEqual([
      { dir: 'event', t: 1, event: 'disconnect', reason: 'socket closed (1006)', cursor: 3, closeCode: 1006 },
      { dir: 'event', t: 2, event: 'terminal', code: 'displaced', message: 'another host', cursor: 3 },
      { dir: 'event', t: 3, event: 'a-future-event', attempt: 2 },
    ]);
    expect(Object.keys(lines[0]!)).toEqual(['dir', 't', 'event', 'reason', 'cursor', 'closeCode']);
    const first = lines[0]!;
    // The type follows the schema: no casts or String() needed to read a field.
    if ('event' in first) {
      const cursor: number | undefined = first.cursor;
      expect(cursor).toBe(3);
    }
  });

  it('an invalid-frame line narrows to its own fields', () => {
    const [, line] = parseRecording(recording({ dir: 'in', t: 1, invalid: '{"type":', code: 'bad-frame', message: 'not JSON' }));
    expect(line && 'invalid' in line ? [line.code, line.message] : null).toEqual(['bad-frame', 'not JSON']);
  });

  it('a listed field of the wrong type is refused', () => {
    expect(() => parseRecording(recording({ dir: 'event', t: 1, event: 'gap', expected: '5', got: 9 }))).toThrow(/line 2/);
  });
});
