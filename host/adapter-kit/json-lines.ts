// Reads a CLI's JSON-lines output back out of journal records for a translator:
// joins the `cont` pieces the bridge splits over-long lines into (per stream),
// caps what it will reassemble, and parses without trusting. What a line means
// is the adapter's; the buffers are plain data kept in the translator's state.
import type { z } from 'zod';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';

/**
 * Longest line a translator reassembles, in UTF-16 units. The bridge journals
 * any length in 256 KiB pieces; a translator's state lives for a whole turn, so
 * a runaway line (a CLI dumping a huge file as one JSON line) must not pin
 * unbounded host memory. 16 Mi units covers every real event line by far.
 */
export const maxJoinedLineChars = 16 * 1024 * 1024;

type Pending = { text: string; truncated: boolean } | null;
export type LineBuffers = { stdout: Pending; stderr: Pending };

export function createLineBuffers(): LineBuffers {
  return { stdout: null, stderr: null };
}

export type OutputLine = { stream: 'stdout' | 'stderr'; text: string; truncated: boolean };

/** The complete line `record` finishes, or undefined (not a stdout/stderr record, or not the last piece). */
export function completeLine(buffers: LineBuffers, record: JournalRecord, maxChars = maxJoinedLineChars): OutputLine | undefined {
  if (record.kind !== 'stdout' && record.kind !== 'stderr') return undefined;
  const stream = record.kind;
  const prior = buffers[stream];
  let text = prior ? prior.text + record.data.text : record.data.text;
  let truncated = prior?.truncated ?? false;
  if (text.length > maxChars) {
    text = text.slice(0, maxChars);
    truncated = true;
  }
  if (record.data.cont) {
    buffers[stream] = { text, truncated };
    return undefined;
  }
  buffers[stream] = null;
  return { stream, text, truncated };
}

/** JSON.parse for a line that should hold one JSON object; undefined when it does not. */
export function parseJsonObject(text: string): unknown {
  if (text.charCodeAt(0) !== 0x7b /* { */) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // not JSON after all (a log line starting with `{`): the caller keeps it as text
  }
}

/**
 * For threadId readers, which the kit asks about every record: the JSON object of a whole stdout line (one record,
 * not a `cont` piece) that `match` accepts — it starts with the string, or matches the pattern — else undefined.
 * The lines it skips are not parsed.
 */
export function wholeStdoutJson(record: JournalRecord, match: string | RegExp): unknown {
  if (record.kind !== 'stdout' || record.data.cont) return undefined;
  const { text } = record.data;
  return (typeof match === 'string' ? text.startsWith(match) : match.test(text)) ? parseJsonObject(text) : undefined;
}

export type JsonLine<T> =
  /** The line parsed and matched the schema; `json` is the line as parsed, before the schema stripped anything. */
  | { ok: true; stream: 'stdout' | 'stderr'; value: T; json: unknown }
  /** Anything else: `json` is the parsed line, or its text when it was not JSON (or was cut at the cap). */
  | { ok: false; stream: 'stdout' | 'stderr'; json: unknown };

/** Reads the line `record` completes (if any) and validates it against `schema`. Never throws on CLI output. */
export function readJsonLine<T>(buffers: LineBuffers, record: JournalRecord, schema: z.ZodType<T>): JsonLine<T> | undefined {
  const line = completeLine(buffers, record);
  if (!line) return undefined;
  const json = line.truncated ? undefined : parseJsonObject(line.text);
  if (json === undefined) return { ok: false, stream: line.stream, json: line.truncated ? `${line.text}…` : line.text };
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, stream: line.stream, value: parsed.data, json } : { ok: false, stream: line.stream, json };
}
