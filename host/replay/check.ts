// Invariant checks over a recording or a journal (docs/design.md#d2, #d3, #d6):
//   seq        — every delivery stream is contiguous (no gap, no duplicate),
//                and the journal the deliveries add up to has no hole;
//   owner      — one owner at a time: records only after ownership was
//                confirmed, none to an owner a newer attach displaced;
//   turn       — records of a turn lie between its turn-start and turn-end,
//                turns do not overlap, each starts and ends once;
//   tool-call  — every host tool call / approval is answered exactly once.
// Violations come back as values, sorted by seq; the CLI stops at the first.
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { deliveries, reconstruct } from './records.ts';
import type { ReplaySource } from './source.ts';
import { translateRecords } from './retranslate.ts';

export type InvariantRule = 'seq-gap' | 'seq-duplicate' | 'seq-conflict' | 'owner' | 'turn-boundary' | 'tool-call';

export type Violation = {
  readonly rule: InvariantRule;
  /** The seq the violation is about. */
  readonly seq: number;
  readonly message: string;
  /** Where it shows in the source (recordings: the frame's line). */
  readonly line?: number;
};

export type CheckResult = {
  readonly ok: boolean;
  /** All violations found, ordered by seq (ties: in the order found). */
  readonly violations: ReadonlyArray<Violation>;
  /** What was checked, for a report. */
  readonly stats: { readonly records: number; readonly deliveries: number; readonly turns: number; readonly hostCalls: number };
};

/**
 * Checks `source`. The tool-call rule needs the adapter (host calls a CLI
 * makes on its stdout are known only to its translator); without one it
 * checks the bridge's own tool-call records only.
 */
export function checkInvariants<S>(source: ReplaySource, adapter?: CliAdapter<S>): CheckResult {
  const violations: Violation[] = [];
  const add = (violation: Violation) => violations.push(violation);
  const delivered = deliveries(source);
  checkStreams(source, add);
  if (source.kind === 'recording') checkOwners(source, add);
  const { records, conflict } = reconstruct(source);
  if (conflict) {
    add({ rule: 'seq-conflict', seq: conflict.seq, line: conflict.line, message: `seq ${conflict.seq} was delivered twice with different content (segment ${conflict.segment + 1})` });
  }
  if (source.kind === 'recording') checkUnion(records, add);
  const turns = checkTurns(records, add);
  const hostCalls = checkToolCalls(records, adapter, add);
  violations.sort((a, b) => a.seq - b.seq);
  return { ok: violations.length === 0, violations, stats: { records: records.length, deliveries: delivered.length, turns, hostCalls } };
}

type Add = (violation: Violation) => void;

/** Per delivery stream: a journal file, or one recording segment between attaches. */
function checkStreams(source: ReplaySource, add: Add): void {
  if (source.kind === 'journal') {
    let expected = 1;
    for (const { line, record } of source.records) {
      if (record.seq !== expected) add(streamViolation(record.seq, expected, line, 'the journal'));
      expected = record.seq + 1;
    }
    return;
  }
  source.segments.forEach((segment, index) => {
    let expected: number | null = null;
    for (const entry of segment.entries) {
      if (entry.type === 'event' && (entry.event === 'disconnect' || entry.event === 'close' || entry.event === 'terminal')) expected = null;
      if (entry.type !== 'in') continue;
      const frame = entry.frame;
      if (frame.type === 'replay-begin') expected = frame.from;
      else if (frame.type === 'error' && frame.code === 'not-owner') expected = null;
      else if (frame.type === 'records') {
        const first = frame.records[0]!;
        if (expected === null) {
          add({ rule: 'owner', seq: first.seq, line: entry.line, message: `seq ${first.seq} reached segment ${index + 1} while it did not own the stream (no replay-begin since it connected or was displaced)` });
          expected = first.seq;
        }
        for (const record of frame.records) {
          if (record.seq !== expected) add(streamViolation(record.seq, expected, entry.line, `segment ${index + 1}`));
          expected = record.seq + 1;
        }
      }
    }
  });
}

function streamViolation(seq: number, expected: number, line: number, where: string): Violation {
  return seq < expected
    ? { rule: 'seq-duplicate', seq, line, message: `seq ${seq} delivered again in ${where} (expected ${expected})` }
    : { rule: 'seq-gap', seq: expected, line, message: `seq ${expected}${seq - 1 > expected ? `..${seq - 1}` : ''} missing in ${where}: the next record was seq ${seq}` };
}

/**
 * Ownership epochs: each replay-begin starts one (its time, and `to`, the
 * durable seq when the bridge switched owners). A record delivered in epoch E
 * with a seq above `to` of a later epoch E' (another segment, same journal,
 * attached before the delivery) reached a displaced owner: two owners at once.
 */
function checkOwners(source: Extract<ReplaySource, { kind: 'recording' }>, add: Add): void {
  type Epoch = { segment: number; at: number; to: number; journalId: string };
  const epochs: Epoch[] = [];
  source.segments.forEach((segment, index) => {
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? '';
    for (const entry of segment.entries) {
      if (entry.type === 'in' && entry.frame.type === 'replay-begin') epochs.push({ segment: index, at: entry.at, to: entry.frame.to, journalId });
    }
  });
  source.segments.forEach((segment, index) => {
    let current: Epoch | undefined;
    for (const entry of segment.entries) {
      if (entry.type !== 'in') continue;
      if (entry.frame.type === 'replay-begin') {
        current = epochs.find((epoch) => epoch.segment === index && epoch.at === entry.at);
        continue;
      }
      if (entry.frame.type !== 'records' || !current) continue;
      const last = entry.frame.records.at(-1)!;
      const epoch = current;
      const newer = epochs.find(
        (other) => other.segment !== index && other.journalId === epoch.journalId && other.at > epoch.at && other.at <= entry.at && other.to < last.seq,
      );
      if (newer) {
        const seq = Math.max(newer.to + 1, entry.frame.records[0]!.seq);
        add({ rule: 'owner', seq, line: entry.line, message: `seq ${seq} reached segment ${index + 1} after segment ${newer.segment + 1} had taken ownership at seq ${newer.to}: two owners at once` });
      }
    }
  });
}

/** The journal the recording adds up to must have no hole (a segment that attached past what anyone received). */
function checkUnion(records: ReadonlyArray<JournalRecord>, add: Add): void {
  for (let i = 1; i < records.length; i++) {
    const previous = records[i - 1]!;
    const record = records[i]!;
    if (record.seq > previous.seq + 1) {
      add({ rule: 'seq-gap', seq: previous.seq + 1, message: `seq ${previous.seq + 1}${record.seq - 2 > previous.seq ? `..${record.seq - 1}` : ''} never reached any segment` });
    }
  }
}

function checkTurns(records: ReadonlyArray<JournalRecord>, add: Add): number {
  const state = new Map<string, 'open' | 'ended'>();
  let open: string | null = null;
  for (const record of records) {
    const turnId = record.turnId;
    if (record.kind === 'turn-start') {
      if (turnId === null) {
        add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn-start without a turn id` });
        continue;
      }
      if (state.has(turnId)) add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} started a second time` });
      else if (open !== null) add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} started while turn ${open} was still running` });
      state.set(turnId, 'open');
      open = turnId;
      continue;
    }
    if (turnId === null) continue;
    const status = state.get(turnId);
    if (status === undefined) add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: ${record.kind} of turn ${turnId} before its turn-start` });
    else if (status === 'ended') add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: ${record.kind} of turn ${turnId} after its turn-end` });
    if (record.kind === 'turn-end') {
      state.set(turnId, 'ended');
      if (open === turnId) open = null;
    }
  }
  return state.size;
}

/**
 * Bridge calls (tool-call / approval-request records) are answered by
 * tool-result / approval records with the same callId. Calls a CLI makes on
 * its stdout are answered by a stdin write carrying the call's id as a JSON
 * string (what every stdin encoder writes); the id is the only link a
 * translator-independent check has. A turn that ends normally (matched/exit)
 * with a call unanswered is a violation; an aborted or interrupted one is not.
 */
function checkToolCalls<S>(records: ReadonlyArray<JournalRecord>, adapter: CliAdapter<S> | undefined, add: Add): number {
  type Call = { id: string; turnId: string; seq: number; source: 'bridge' | 'cli'; answers: number };
  const calls = new Map<string, Call>();
  const key = (turnId: string, id: string) => `${turnId}\u0000${id}`;
  if (adapter) {
    for (const call of translateRecords(adapter, records).hostCalls) {
      calls.set(key(call.turnId, call.id), { id: call.id, turnId: call.turnId, seq: call.seq, source: call.source, answers: 0 });
    }
  } else {
    for (const record of records) {
      if ((record.kind === 'tool-call' || record.kind === 'approval-request') && record.turnId !== null) {
        calls.set(key(record.turnId, record.data.callId), { id: record.data.callId, turnId: record.turnId, seq: record.seq, source: 'bridge', answers: 0 });
      }
    }
  }
  const answer = (call: Call | undefined, record: JournalRecord) => {
    if (!call) return;
    call.answers++;
    if (call.answers === 2) add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: tool call ${call.id} (seq ${call.seq}) answered a second time` });
  };
  for (const record of records) {
    const turnId = record.turnId;
    if (record.kind === 'tool-result' || record.kind === 'approval') {
      const call = turnId === null ? findCall(calls, record.data.callId) : calls.get(key(turnId, record.data.callId)) ?? findCall(calls, record.data.callId);
      if (!call || call.source !== 'bridge') {
        add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: ${record.kind} for ${record.data.callId}, which no tool call asked for` });
        continue;
      }
      answer(call, record);
    } else if (record.kind === 'stdin' && turnId !== null) {
      for (const call of calls.values()) {
        if (call.turnId === turnId && call.source === 'cli' && call.seq < record.seq && record.data.text.includes(JSON.stringify(call.id))) answer(call, record);
      }
    } else if (record.kind === 'turn-end' && turnId !== null && (record.data.reason === 'matched' || record.data.reason === 'exit')) {
      for (const call of calls.values()) {
        if (call.turnId === turnId && call.answers === 0) {
          add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} ended with tool call ${call.id} (seq ${call.seq}) never answered` });
        }
      }
    }
  }
  return calls.size;
}

function findCall<C extends { id: string }>(calls: Map<string, C>, id: string): C | undefined {
  for (const call of calls.values()) if (call.id === id) return call;
  return undefined;
}
