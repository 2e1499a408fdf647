// A timeline of a recording or journal as rows of data: every record with its
// seq, turn and time, plus connection events and recovery-ladder markers
// (which rung each new segment took, bridge restarts, rerun turns). Rendering
// (columns, colours) is the CLI's. Rows stream, as the source is read.
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { ReplayInput, SegmentInput } from './source-types.ts';

export type TimelineRow = {
  /** Milliseconds since the first segment started (recordings) or the first record (journals). */
  readonly t: number;
  readonly kind: 'record' | 'frame' | 'event' | 'rung' | 'segment';
  readonly seq?: number;
  readonly turnId?: string | null;
  /** A record delivered as replay traffic (inside replay-begin … replay-end). */
  readonly replay?: boolean;
  readonly text: string;
  readonly line?: number;
};

const quietFrames = new Set(['ping', 'pong', 'ack']);

/** Every row, materialized (small sources, tests). */
export function buildTimeline(source: ReplayInput): TimelineRow[] {
  return [...timelineRows(source)];
}

export function* timelineRows(source: ReplayInput): Generator<TimelineRow, void, undefined> {
  if (source.kind === 'journal') {
    let origin: number | undefined;
    yield { t: 0, kind: 'segment', text: `journal ${short(source.header.journalId)} (format ${source.header.format})`, line: 1 };
    for (const { line, record } of source.records) {
      origin ??= record.ts;
      const t = record.ts - origin;
      const marker = recordMarker(record);
      if (marker) yield { t, kind: 'rung', seq: record.seq, turnId: record.turnId, text: marker, line };
      yield { t, kind: 'record', seq: record.seq, turnId: record.turnId, text: recordSummary(record), line };
    }
    return;
  }
  const origin = source.segments[0]?.header.startedAt ?? 0;
  let previous: SegmentInput | undefined;
  for (const [index, segment] of source.segments.entries()) {
    const t0 = segment.header.startedAt - origin;
    yield { t: t0, kind: 'segment', text: `segment ${index + 1} (${fileName(segment.file)}:${segment.line}) cursor ${segment.header.cursor}`, line: segment.line };
    const rung = segmentRung(segment, previous);
    if (rung) yield { t: t0, kind: 'rung', text: rung, line: segment.line };
    previous = segment;
    let replay = false;
    for (const entry of segment.entries) {
      const t = entry.at - origin;
      if (entry.type === 'event') {
        if (entry.event === 'open') continue;
        yield { t, kind: 'event', text: eventText(entry.event, entry.attrs), line: entry.line };
      } else if (entry.type === 'invalid') {
        yield { t, kind: 'event', text: `invalid inbound frame (${entry.code}): ${entry.message}`, line: entry.line };
      } else if (entry.type === 'out') {
        if (quietFrames.has(entry.frame.type)) continue;
        yield { t, kind: 'frame', text: `→ ${outText(entry.frame)}`, line: entry.line };
      } else {
        const frame = entry.frame;
        if (frame.type === 'records') {
          for (const record of frame.records) {
            const marker = recordMarker(record);
            if (marker) yield { t, kind: 'rung', seq: record.seq, turnId: record.turnId, text: marker, line: entry.line };
            yield { t, kind: 'record', seq: record.seq, turnId: record.turnId, replay, text: recordSummary(record), line: entry.line };
          }
          continue;
        }
        if (frame.type === 'replay-begin') replay = true;
        if (frame.type === 'replay-end') replay = false;
        if (quietFrames.has(frame.type)) continue;
        yield { t, kind: 'frame', text: `← ${inText(frame)}`, line: entry.line };
      }
    }
  }
}

function segmentRung(segment: SegmentInput, previous: SegmentInput | undefined): string | undefined {
  const hello = segment.hello;
  if (!previous) return segment.header.cursor > 0 ? `resume at cursor ${segment.header.cursor}` : undefined;
  const before = previous.hello;
  if (!hello || !before) return undefined;
  if (hello.journalId !== before.journalId) return 'rung rerun: a different journal (the old one was lost)';
  if (hello.bridgeId !== before.bridgeId) return 'rung replay: a new bridge on the same journal';
  return 'rung attach: the same bridge';
}

function recordMarker(record: JournalRecord): string | undefined {
  if (record.kind === 'bridge-start' && record.seq > 1) {
    const adopted = record.data.adopted;
    return `bridge restarted on this journal (replay rung)${record.data.recovered?.droppedRecords ? `, recovery dropped ${record.data.recovered.droppedRecords} torn record(s)` : ''}${
      adopted ? `, re-adopted the surviving CLI (pid ${adopted.pid}${adopted.turnId === null ? ', between turns' : `, turn ${adopted.turnId} continues`})` : ''
    }`;
  }
  if (record.kind === 'turn-start' && record.data.rerun) return 'rung rerun: this turn is recomputed';
  if (record.kind === 'turn-end' && record.data.reason === 'interrupted') return 'turn interrupted: its bridge died while it ran';
  return undefined;
}

/** One line about a record: kind and the data that matters, cut to a readable length. */
export function recordSummary(record: JournalRecord): string {
  switch (record.kind) {
    case 'turn-start':
      return `turn-start${record.data.rerun ? ' (rerun)' : ''}${record.data.input === undefined ? '' : ` input ${clip(record.data.input)}`}`;
    case 'turn-end':
      return `turn-end ${record.data.reason}${record.data.code == null ? '' : ` code ${record.data.code}`}${record.data.message ? ` ${clip(record.data.message)}` : ''}`;
    case 'spawn':
      return `spawn pid ${record.data.pid}${record.data.pty ? ' (pty)' : ''} ${clip(record.data.argv.map((arg) => fileName(arg)).join(' '), 60)}`;
    case 'stdout':
    case 'stderr':
      return `${record.kind}${record.data.cont ? ' (cont)' : ''} ${clip(record.data.text)}`;
    case 'pty':
    case 'stdin':
      return `${record.kind} ${clip(record.data.text)}`;
    case 'signal':
      return `signal ${record.data.signal}${record.data.reason ? ` (${record.data.reason})` : ''}`;
    case 'exit':
      return `exit pid ${record.data.pid} code ${record.data.code ?? '-'}${record.data.signal ? ` signal ${record.data.signal}` : ''}`;
    case 'tool-call':
      return `tool-call ${record.data.name} ${record.data.callId} ${clip(JSON.stringify(record.data.input ?? {}), 60)}`;
    case 'tool-result':
      return `tool-result ${record.data.callId}${record.data.isError ? ' (error)' : ''} ${clip(JSON.stringify(record.data.output ?? null), 60)}`;
    case 'approval-request':
      return `approval-request ${record.data.toolName} ${record.data.callId}`;
    case 'approval':
      return `approval ${record.data.callId} ${record.data.approved ? 'approved' : 'denied'}`;
    case 'bridge-start':
      return `bridge-start ${short(record.data.bridgeId)} v${record.data.version}${record.data.adopted ? ` adopted pid ${record.data.adopted.pid}` : ''}`;
  }
}

function eventText(event: string, attrs: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(attrs).map(([key, value]) => `${key}=${typeof value === 'string' ? clip(value, 60) : JSON.stringify(value)}`);
  return `${event}${parts.length > 0 ? ` ${parts.join(' ')}` : ''}`;
}

function inText(frame: { type: string } & Record<string, unknown>): string {
  switch (frame.type) {
    case 'hello':
      return `hello bridge ${short(String(frame.bridgeId))} journal ${short(String(frame.journalId))} seq ${String(frame.firstSeq)}..${String(frame.lastSeq)} ${String(frame.state)}`;
    case 'replay-begin':
      return `replay-begin ${String(frame.from)}..${String(frame.to)}`;
    case 'error':
      return `error ${String(frame.code)}: ${clip(String(frame.message), 80)}`;
    case 'diagnostic':
      return `diagnostic ${String(frame.level)} ${String(frame.subsystem)}: ${clip(String(frame.message), 80)}`;
    default:
      return frame.type;
  }
}

function outText(frame: { type: string } & Record<string, unknown>): string {
  switch (frame.type) {
    case 'attach':
      return `attach cursor ${String(frame.cursor)}`;
    case 'start':
    case 'rerun':
      return `${frame.type} ${String(frame.turnId)}`;
    case 'input':
      return `input ${clip(String(frame.text), 60)}`;
    case 'tool-result':
      return `tool-result ${String(frame.callId)}`;
    case 'approval':
      return `approval ${String(frame.callId)} ${frame.approved ? 'approved' : 'denied'}`;
    default:
      return frame.type;
  }
}

function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

function short(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

function fileName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
