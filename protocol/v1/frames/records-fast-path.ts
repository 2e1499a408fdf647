// A records frame of line records (stdout/stderr: the bulk of any turn, and
// all of a long replay) checked by hand. It accepts exactly what
// recordsFrameSchema accepts for these shapes and returns what it would return
// (the same keys in the same order); anything else — another record kind, an
// extra or reordered key, a value the schema refuses — gives null, and the
// schema decides and explains. zod's walk was ~40 % of the host's cost per
// record (docs/bridge-internals.md#resume-costs).
import type { RecordsFrame } from './bridge/records.ts';

const frameKeys = ['type', 'records'] as const;
const recordKeys = ['seq', 'turnId', 'ts', 'kind', 'data'] as const;
/** turnIdSchema's bounds (protocol/v1/common.ts). */
const maxTurnIdChars = 200;

/** The frame as recordsFrameSchema would return it, or null when the schema must decide. */
export function fastRecordsFrame(json: unknown): RecordsFrame | null {
  if (typeof json !== 'object' || json === null) return null;
  const frame = json as Record<string, unknown>;
  if (frame.type !== 'records' || !hasKeysInOrder(frame, frameKeys, frameKeys.length)) return null;
  const records = frame.records;
  if (!Array.isArray(records) || records.length === 0) return null;
  for (let i = 0; i < records.length; i++) if (!isLineRecord(records[i])) return null;
  return frame as RecordsFrame;
}

function isLineRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (kind !== 'stdout' && kind !== 'stderr') return false;
  if (!hasKeysInOrder(record, recordKeys, recordKeys.length)) return false;
  const { seq, turnId, ts, data } = record;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return false;
  if (turnId !== null && (typeof turnId !== 'string' || turnId.length < 1 || turnId.length > maxTurnIdChars)) return false;
  if (typeof ts !== 'number' || !Number.isFinite(ts)) return false;
  return isLineData(data);
}

/** { text, cont?, off? } in that order, nothing else. */
function isLineData(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const data = value as Record<string, unknown>;
  let keys = 0;
  let stage = 0;
  for (const key in data) {
    keys++;
    if (key === 'text' && stage === 0) stage = 1;
    else if (key === 'cont' && stage === 1 && typeof data.cont === 'boolean') stage = 2;
    else if (key === 'off' && stage >= 1 && stage < 3 && isOffset(data.off)) stage = 3;
    else return false;
  }
  return keys > 0 && typeof data.text === 'string';
}

function isOffset(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Own enumerable keys are exactly `keys`, in order (a JSON.parse result has no others). */
function hasKeysInOrder(object: Record<string, unknown>, keys: readonly string[], count: number): boolean {
  let i = 0;
  for (const key in object) {
    if (i >= count || key !== keys[i]) return false;
    i++;
  }
  return i === count;
}
