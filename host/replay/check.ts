// Invariant checks over a recording or a journal (docs/design.md#d2, #d3, #d6):
//   seq        — every delivery stream is contiguous (no gap, no duplicate),
//                and the journal the deliveries add up to has no hole;
//   owner      — one owner at a time: records only after ownership was
//                confirmed, none to an owner a newer attach displaced;
//   turn       — records of a turn lie between its turn-start and turn-end,
//                turns do not overlap, each starts and ends once;
//   tool-call  — every host tool call / approval is answered exactly once.
// Violations come back as values, sorted by seq; the CLI stops at the first.
// Streaming: a journal is checked in one pass over its records, a recording in
// two (its deliveries, then the records they reconstruct); memory grows with
// turns and host tool calls, not with records.
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { deliveries, RecordStream, recordingIndex } from './records.ts';
import type { Epoch, RecordingInput, ReplayInput } from './source-types.ts';
import { TranslationStream } from './retranslate.ts';

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
  /** Violations found, ordered by seq (ties: by rule, in the order listed above, then as found); at most `maxViolations`. */
  readonly violations: ReadonlyArray<Violation>;
  /** Violations beyond `maxViolations` (those with the highest seqs) that were not kept. */
  readonly dropped: number;
  /** What was checked, for a report. */
  readonly stats: { readonly records: number; readonly deliveries: number; readonly turns: number; readonly hostCalls: number };
};

/** Violations kept per check: a badly broken file must not fill memory with them. */
export const maxViolations = 10_000;

/** The order rules are reported in for one seq (what the checks once ran in, one after the other). */
const rank = { stream: 0, owner: 1, conflict: 2, union: 3, turn: 4, tool: 5 } as const;
type Ranked = { violation: Violation; rank: number; order: number };

/** The lowest-seq violations, bounded. */
class Violations {
  #kept: Ranked[] = [];
  #order = 0;
  dropped = 0;
  add(rankOf: number, violation: Violation): void {
    this.#kept.push({ violation, rank: rankOf, order: this.#order++ });
    if (this.#kept.length >= 2 * maxViolations) this.#trim();
  }
  #trim(): void {
    this.#kept.sort((a, b) => a.violation.seq - b.violation.seq || a.rank - b.rank || a.order - b.order);
    if (this.#kept.length > maxViolations) {
      this.dropped += this.#kept.length - maxViolations;
      this.#kept.length = maxViolations;
    }
  }
  done(): Violation[] {
    this.#trim();
    return this.#kept.map((entry) => entry.violation);
  }
}

type Add = (violation: Violation) => void;

/**
 * Checks `source`. The tool-call rule needs the adapter (host calls a CLI
 * makes on its stdout are known only to its translator); without one it
 * checks the bridge's own tool-call records only.
 */
export function checkInvariants<S>(source: ReplayInput, adapter?: CliAdapter<S>): CheckResult {
  const found = new Violations();
  const adder = (kind: keyof typeof rank): Add => (violation) => found.add(rank[kind], violation);
  const turns = new TurnRule(adder('turn'));
  const tools = new ToolCallRule(adapter, adder('tool'));
  let delivered = 0;
  let records = 0;
  const onRecord = (record: JournalRecord): void => {
    records++;
    turns.push(record);
    tools.push(record);
  };
  if (source.kind === 'journal') {
    // One pass: the journal is its own only delivery stream, and its records (in increasing seq) the reconstruction.
    const streamAdd = adder('stream');
    let expected = 1;
    let last = 0;
    for (const { line, record } of source.records) {
      delivered++;
      if (record.seq !== expected) streamAdd(streamViolation(record.seq, expected, line, 'the journal'));
      expected = record.seq + 1;
      if (record.seq <= last) continue;
      last = record.seq;
      onRecord(record);
    }
  } else {
    delivered = checkDeliveries(source, adder('stream'), adder('owner'));
    const stream = new RecordStream(source);
    const union = new UnionRule(adder('union'));
    for (const record of stream.records()) {
      union.push(record);
      onRecord(record);
    }
    const conflict = stream.conflict;
    if (conflict) {
      adder('conflict')({ rule: 'seq-conflict', seq: conflict.seq, line: conflict.line, message: `seq ${conflict.seq} was delivered twice with different content (segment ${conflict.segment + 1})` });
    }
  }
  const violations = found.done();
  return { ok: violations.length === 0, violations, dropped: found.dropped, stats: { records, deliveries: delivered, turns: turns.count, hostCalls: tools.count } };
}

/** Per delivery stream (one recording segment between attaches): the seq rule; and the owner rule. Returns the deliveries seen. */
function checkDeliveries(source: RecordingInput, addStream: Add, addOwner: Add): number {
  const epochs = recordingIndex(source).epochs;
  let count = 0;
  source.segments.forEach((segment, index) => {
    let expected: number | null = null;
    let current: Epoch | undefined;
    for (const entry of segment.entries) {
      if (entry.type === 'event' && (entry.event === 'disconnect' || entry.event === 'close' || entry.event === 'terminal')) expected = null;
      if (entry.type !== 'in') continue;
      const frame = entry.frame;
      if (frame.type === 'replay-begin') {
        expected = frame.from;
        current = epochs.find((epoch) => epoch.segment === index && epoch.at === entry.at);
      } else if (frame.type === 'error' && frame.code === 'not-owner') expected = null;
      else if (frame.type === 'records') {
        count++;
        const first = frame.records[0]!;
        if (expected === null) {
          addStream({ rule: 'owner', seq: first.seq, line: entry.line, message: `seq ${first.seq} reached segment ${index + 1} while it did not own the stream (no replay-begin since it connected or was displaced)` });
          expected = first.seq;
        }
        for (const record of frame.records) {
          if (record.seq !== expected) addStream(streamViolation(record.seq, expected, entry.line, `segment ${index + 1}`));
          expected = record.seq + 1;
        }
        if (current) checkOwner(epochs, index, current, entry.at, entry.line, frame.records, addOwner);
      }
    }
  });
  return count;
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
function checkOwner(epochs: ReadonlyArray<Epoch>, index: number, epoch: Epoch, at: number, line: number, records: ReadonlyArray<JournalRecord>, add: Add): void {
  const last = records.at(-1)!;
  const newer = epochs.find((other) => other.segment !== index && other.journalId === epoch.journalId && other.at > epoch.at && other.at <= at && other.to < last.seq);
  if (newer) {
    const seq = Math.max(newer.to + 1, records[0]!.seq);
    add({ rule: 'owner', seq, line, message: `seq ${seq} reached segment ${index + 1} after segment ${newer.segment + 1} had taken ownership at seq ${newer.to}: two owners at once` });
  }
}

/** The journal the recording adds up to must have no hole (a segment that attached past what anyone received). */
class UnionRule {
  #previous: JournalRecord | undefined;
  constructor(private readonly add: Add) {}
  push(record: JournalRecord): void {
    const previous = this.#previous;
    this.#previous = record;
    if (previous && record.seq > previous.seq + 1) {
      this.add({ rule: 'seq-gap', seq: previous.seq + 1, message: `seq ${previous.seq + 1}${record.seq - 2 > previous.seq ? `..${record.seq - 1}` : ''} never reached any segment` });
    }
  }
}

class TurnRule {
  readonly #state = new Map<string, 'open' | 'ended'>();
  #open: string | null = null;
  constructor(private readonly add: Add) {}
  get count(): number {
    return this.#state.size;
  }
  push(record: JournalRecord): void {
    const turnId = record.turnId;
    if (record.kind === 'turn-start') {
      if (turnId === null) {
        this.add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn-start without a turn id` });
        return;
      }
      if (this.#state.has(turnId)) this.add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} started a second time` });
      else if (this.#open !== null) this.add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} started while turn ${this.#open} was still running` });
      this.#state.set(turnId, 'open');
      this.#open = turnId;
      return;
    }
    if (turnId === null) return;
    const status = this.#state.get(turnId);
    if (status === undefined) this.add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: ${record.kind} of turn ${turnId} before its turn-start` });
    else if (status === 'ended') this.add({ rule: 'turn-boundary', seq: record.seq, message: `seq ${record.seq}: ${record.kind} of turn ${turnId} after its turn-end` });
    if (record.kind === 'turn-end') {
      this.#state.set(turnId, 'ended');
      if (this.#open === turnId) this.#open = null;
    }
  }
}

/** `journaled`: a CLI-side call whose answer has a tool-result / approval record and whose stdin bytes for it are still to come (they are that answer, not a second). */
type Call = { id: string; turnId: string; seq: number; source: 'bridge' | 'cli'; answers: number; journaled?: boolean };

/**
 * Bridge calls (tool-call / approval-request records) are answered by
 * tool-result / approval records with the same callId. Calls a CLI makes on
 * its stdout are answered by a stdin write carrying the call's id as a JSON
 * string (what every stdin encoder writes); the id is the only link a
 * translator-independent check has. A turn that ends normally (matched/exit)
 * with a call unanswered is a violation; an aborted or interrupted one is not.
 * A call is known from the record that raised it on (an answer before its call
 * counts as one no call asked for).
 */
class ToolCallRule<S> {
  readonly #calls = new Map<string, Call>();
  readonly #byId = new Map<string, Call>();
  readonly #byTurn = new Map<string, Call[]>();
  readonly #translation: TranslationStream<S> | undefined;
  constructor(
    adapter: CliAdapter<S> | undefined,
    private readonly add: Add,
  ) {
    this.#translation = adapter ? new TranslationStream(adapter) : undefined;
  }
  get count(): number {
    return this.#calls.size;
  }

  #register(id: string, turnId: string, seq: number, source: 'bridge' | 'cli'): void {
    const key = `${turnId}\u0000${id}`;
    const known = this.#calls.get(key);
    if (known) {
      known.seq = seq;
      known.source = source;
      return;
    }
    const call: Call = { id, turnId, seq, source, answers: 0 };
    this.#calls.set(key, call);
    if (!this.#byId.has(id)) this.#byId.set(id, call);
    let list = this.#byTurn.get(turnId);
    if (!list) this.#byTurn.set(turnId, (list = []));
    list.push(call);
  }

  #answer(call: Call, record: JournalRecord): void {
    call.answers++;
    if (call.answers === 2) this.add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: tool call ${call.id} (seq ${call.seq}) answered a second time` });
  }

  push(record: JournalRecord): void {
    if (this.#translation) {
      this.#translation.push(record, (call) => this.#register(call.id, call.turnId, call.seq, call.source));
    } else if ((record.kind === 'tool-call' || record.kind === 'approval-request') && record.turnId !== null) {
      this.#register(record.data.callId, record.turnId, record.seq, 'bridge');
    }
    const turnId = record.turnId;
    if (record.kind === 'tool-result' || record.kind === 'approval') {
      const id = record.data.callId;
      const call = (turnId === null ? undefined : this.#calls.get(`${turnId}\u0000${id}`)) ?? this.#byId.get(id);
      if (!call) {
        this.add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: ${record.kind} for ${id}, which no tool call asked for` });
        return;
      }
      // A CLI-side call's answer is journaled when the host named it (an input frame's `answer`, the owner-less
      // timeout's failure): that record is the answer, and the first stdin bytes naming it after it are the same answer.
      if (call.source === 'cli') call.journaled = true;
      this.#answer(call, record);
    } else if (record.kind === 'stdin' && turnId !== null) {
      for (const call of this.#byTurn.get(turnId) ?? []) {
        if (call.source !== 'cli' || call.seq >= record.seq || !record.data.text.includes(JSON.stringify(call.id))) continue;
        if (call.journaled) call.journaled = false; // the bytes of the answer its record named
        else this.#answer(call, record);
      }
    } else if (record.kind === 'turn-end' && turnId !== null && (record.data.reason === 'matched' || record.data.reason === 'exit')) {
      for (const call of this.#byTurn.get(turnId) ?? []) {
        if (call.answers === 0) this.add({ rule: 'tool-call', seq: record.seq, message: `seq ${record.seq}: turn ${turnId} ended with tool call ${call.id} (seq ${call.seq}) never answered` });
      }
    }
  }
}
