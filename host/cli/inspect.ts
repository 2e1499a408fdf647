// `harness-bridge inspect <state-dir>`: what a bridge left in its state dir —
// bridge.json (is its pid alive, does its socket answer), the turns in its
// journal, and the journal's health (records, first/last seq, torn tail,
// corrupt line, seq gaps). Read-only: it never attaches, so it displaces no
// owner, and it never prints the token. The journal is streamed (bounded
// memory whatever its size); a journal.ndjson that is not a journal at all is
// an error naming the file, line and byte offset and what was expected.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bridgeReadySchema, type BridgeReady } from '../reach/bridge-process.ts';
import { probeBridge } from '../reach/probe.ts';
import { JournalFile, SourceError, type JournalScanState } from '../replay/index.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { booleanFlag, CliError, parseArgs } from './args.ts';
import { stdoutStyle } from './style.ts';

export const inspectHelp = `usage: harness-bridge inspect <state-dir> [--json]

Reports on a bridge state dir (<sandbox>/.harness-bridge/sessions/<id>, or the
stateDir of a resume payload):
  bridge   bridge.json: bridge id, journal id, port, version, pid and whether
           that pid is alive; if it is, whether the socket answers (hello)
  journal  records, first/last seq, seq continuity, torn tail or corrupt line
           (by line number), whether it is the journal bridge.json names
  turns    each turn: id, status (running/ended/…), seq range, rerun

The journal is streamed (any size). A damaged journal (a torn tail, a corrupt
line) is reported and the exit code is 0; a journal.ndjson that is not a
journal at all, or a file given instead of a state dir, is an error naming the
file (line, byte offset, what was expected) with exit code 1.

options:
  --json      the same as one JSON object
  -h, --help  this help`;

const flags = { json: { type: 'boolean' } } as const;
const probeTimeoutMs = 1_500;

type TurnRow = { turnId: string; status: string; firstSeq: number; lastSeq: number; rerun: boolean; input: string | undefined };

export async function inspectCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('inspect', argv, flags, { min: 1, max: 1, name: 'the state dir to inspect' });
  if (parsed.help) {
    process.stdout.write(`${inspectHelp}\n`);
    return 0;
  }
  const dir = parsed.positionals[0]!;
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    throw new CliError(`inspect: cannot read ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!isDir) throw new CliError(`inspect: ${dir} is ${whatFileIs(dir)}, not a bridge state dir`);
  const bridgeText = readOptional(join(dir, 'bridge.json'));
  const journalPath = join(dir, 'journal.ndjson');
  const journalSize = optionalSize(journalPath);
  if (bridgeText === undefined && journalSize === undefined) throw new CliError(`inspect: ${dir} is not a bridge state dir (no bridge.json, no journal.ndjson)`);

  const bridge = bridgeText === undefined ? undefined : parseBridge(bridgeText);
  const alive = bridge?.ok && bridge.ready.pid !== undefined ? pidAlive(bridge.ready.pid) : undefined;
  let answering: { ok: boolean; detail: string } | undefined;
  if (bridge?.ok && alive) {
    const token = readOptional(join(dir, 'token'))?.trim();
    if (token) {
      const probe = await probeBridge(`ws://127.0.0.1:${bridge.ready.port}`, token, probeTimeoutMs);
      answering = probe.ok
        ? { ok: true, detail: `hello: ${probe.hello.state}, seq ${probe.hello.firstSeq}..${probe.hello.lastSeq}` }
        : { ok: false, detail: `${probe.reason}: ${probe.detail}` };
    }
  }
  const scan = journalSize === undefined ? undefined : scanJournal(journalPath, journalSize);
  const health = scan?.health;
  const turns = scan?.turns ?? [];

  if (booleanFlag(parsed, 'json')) {
    process.stdout.write(
      `${JSON.stringify({
        stateDir: dir,
        bridge: bridge === undefined ? null : bridge.ok ? { ...bridge.ready, alive: alive ?? null, answering: answering ?? null } : { error: bridge.error },
        journal: health ?? null,
        turns,
      })}\n`,
    );
    return 0;
  }
  const style = stdoutStyle();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(style.bold(`state dir ${dir}`));
  out(style.bold('bridge'));
  if (bridge === undefined) out(style.dim('  no bridge.json (no bridge has become ready here)'));
  else if (!bridge.ok) out(style.red(`  bridge.json unreadable: ${bridge.error}`));
  else {
    const r = bridge.ready;
    out(`  id ${r.bridgeId}  version ${r.version}  port ${r.port}`);
    out(`  journal ${r.journalId}`);
    const pidText = r.pid === undefined ? 'pid unknown' : `pid ${r.pid} ${alive ? style.green('alive') : style.yellow('not running')}`;
    out(`  ${pidText}${answering ? `  socket ${answering.ok ? style.green('answers') : style.red('does not answer')} (${answering.detail})` : ''}`);
  }
  out(style.bold('journal'));
  if (!health) out(style.dim('  no journal.ndjson'));
  else {
    out(`  id ${health.journalId ?? style.red('(no valid header)')}${bridge?.ok && health.journalId && health.journalId !== bridge.ready.journalId ? style.yellow('  (not the journal bridge.json names)') : ''}`);
    out(`  ${health.records} records, seq ${health.firstSeq}..${health.lastSeq}, ${health.bytes} bytes`);
    out(`  health ${health.healthy ? style.green('ok') : style.red(health.problems.join('; '))}`);
  }
  out(style.bold(`turns (${turns.length})`));
  for (const turn of turns) {
    const status = turn.status === 'running' ? style.yellow(turn.status) : turn.status === 'ended' ? style.green(turn.status) : style.red(turn.status);
    out(`  ${turn.turnId.padEnd(24)} ${status.padEnd(12)} seq ${turn.firstSeq}..${turn.lastSeq}${turn.rerun ? style.yellow(' rerun') : ''}${turn.input ? style.dim(`  ${turn.input}`) : ''}`);
  }
  return 0;
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`inspect: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function optionalSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`inspect: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** For a file given where a state dir belongs: what it looks like, and what to do with it. */
function whatFileIs(path: string): string {
  let head = '';
  try {
    const fd = openSync(path, 'r');
    try {
      const bytes = Buffer.alloc(256);
      head = bytes.toString('utf8', 0, readSync(fd, bytes, 0, bytes.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return 'not a directory';
  }
  if (/^[0-9a-f]{8}\t/.test(head)) return `a journal file (inspect its state dir, ${dirname(path)}; harness-bridge replay reads the file)`;
  if (head.includes('"type":"recording-header"')) return 'a recording (a channel recording: harness-bridge replay reads it)';
  return 'a file, not a directory';
}

function parseBridge(text: string): { ok: true; ready: BridgeReady } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not JSON (${(error as Error).message})` };
  }
  const parsed = bridgeReadySchema.safeParse(json);
  return parsed.success ? { ok: true, ready: parsed.data } : { ok: false, error: parsed.error.issues[0]?.message ?? 'not a bridge-ready line' };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

type Health = {
  journalId: string | undefined;
  records: number;
  firstSeq: number;
  lastSeq: number;
  bytes: number;
  tornTail: boolean;
  corruptLine: number | undefined;
  gaps: number;
  healthy: boolean;
  problems: string[];
};

/**
 * One streaming pass over the journal: health (counts, seq continuity, the
 * first bad line) and the turns. A journal.ndjson whose first line is not a
 * journal line at all is not damage to report but the wrong file: a CliError.
 */
function scanJournal(path: string, bytes: number): { health: Health; turns: TurnRow[] } {
  const file = new JournalFile(path);
  const turns = new Map<string, TurnRow>();
  let records = 0;
  let firstSeq = 0;
  let lastSeq = 0;
  let gaps = 0;
  let firstGap: string | undefined;
  for (const { record } of file.records()) {
    records++;
    if (record.seq !== lastSeq + 1) {
      gaps++;
      firstGap ??= `seq jumps from ${lastSeq} to ${record.seq}`;
    }
    if (records === 1) firstSeq = record.seq;
    lastSeq = record.seq;
    turnRow(turns, record);
  }
  const state: JournalScanState = file.state;
  const problem = state.problem;
  if (problem?.notJournal) {
    const error = new SourceError('unknown-format', problem.reason, { file: path, line: problem.line, offset: problem.offset, expected: problem.expected });
    throw new CliError(`inspect: ${error.message}`);
  }
  const problems: string[] = [];
  if (firstGap) problems.push(firstGap);
  if (problem) problems.push(`line ${problem.line}: ${problem.reason}${problem.torn ? ' (the bridge truncates it when it next opens the journal)' : ''}`);
  return {
    health: {
      journalId: state.header?.journalId,
      records,
      firstSeq,
      lastSeq,
      bytes,
      tornTail: problem?.torn ?? false,
      corruptLine: problem && !problem.torn ? problem.line : undefined,
      gaps,
      healthy: problems.length === 0,
      problems,
    },
    turns: [...turns.values()],
  };
}

function turnRow(turns: Map<string, TurnRow>, record: JournalRecord): void {
  if (record.turnId === null) return;
  let turn = turns.get(record.turnId);
  if (!turn) {
    turn = { turnId: record.turnId, status: 'running', firstSeq: record.seq, lastSeq: record.seq, rerun: false, input: undefined };
    turns.set(record.turnId, turn);
  }
  turn.lastSeq = record.seq;
  if (record.kind === 'turn-start') {
    turn.rerun = record.data.rerun === true;
    const input = record.data.input?.replace(/\s+/g, ' ').trim();
    turn.input = input === undefined ? undefined : input.length > 60 ? `${input.slice(0, 60)}…` : input;
  }
  if (record.kind === 'turn-end') turn.status = record.data.reason === 'matched' || record.data.reason === 'exit' ? 'ended' : record.data.reason;
}
