// Stage 2 of a restart that found a surviving CLI (launch `survive`; main.ts
// decided and journaled `bridge-start {adopted}`): reads the journal from the
// kept CLI's spawn (or its turn's start) to find where each capture stream's
// journaled output ends (the last `off`), whether that piece was `cont` (a pty:
// its unfinished line, for turnEnd matching), and
// (launch.inputAck) the turn's stdin writes and complete lines, and how far the
// launch's handshake (launch `start`) got; then hands the CLI to the
// supervisor. A keeper dir without its saved launch cannot be
// driven: its group is killed and the turn ends 'interrupted' as before.
// Host tool calls of the adopted turn: those that came through the keeper's MCP
// relay (their tool-call has `relay`) are carried over — the keeper holds each
// request and sends it again to this bridge, which answers it (mcp/relayed-calls.ts).
// A call without a relay id died with the old bridge's MCP connection (the CLI
// got a transport error as its result): it gets a journaled error result here,
// so no host is asked again for an answer nothing waits for.
// Writes the keeper made to the CLI's stdin whose `stdin` records died with the
// old bridge (the keeper counts and keeps them, keeper.ts) are journaled here;
// journaled writes that never reached the keeper are written again.
import type { HostToolSpec, JournalRecord, RecordDraft } from '../../protocol/v1/index.ts';
import type { AdoptedCall } from '../mcp/relayed-calls.ts';
import type { Journal } from '../journal/journal.ts';
import { keeperDir, readKeeperInputs, readSavedLaunch, type KeeperInputs } from './keeper-dir.ts';
import { RecentInputs } from './recent-inputs.ts';
import { SERVER_LIMITS } from '../limits.ts';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { Adopted } from '../after-ready-context.ts';
import type { Adoption } from './adoption.ts';
import { StartGate } from '../supervisor/process-start.ts';
import { ptyLines } from '../supervisor/proc-entry.ts';
import type { Supervisor } from '../supervisor/supervisor.ts';

export async function adoptSurvivor(options: {
  stateDir: string;
  adopted: Adopted;
  journal: Journal;
  supervisor: Supervisor;
  record: (draft: RecordDraft) => number | null;
}): Promise<{ tools: HostToolSpec[]; calls: AdoptedCall[]; mcp: KeeperInputs['mcp'] }> {
  const tools: HostToolSpec[] = [];
  const relayed = new Map<string, AdoptedCall>();
  const { adopted, journal } = options;
  const dir = keeperDir(options.stateDir, adopted.keeper);
  const saved = readSavedLaunch(dir);
  if (saved === null) {
    try {
      process.kill(-adopted.pid, 'SIGKILL');
    } catch {
      // gone
    }
    if (adopted.turnId !== null) {
      options.record({
        kind: 'turn-end',
        turnId: adopted.turnId,
        data: { reason: 'interrupted', message: 'the bridge running this turn exited, and its surviving CLI could not be adopted (keeper files unreadable)' },
      });
    }
    return { tools, calls: [], mcp: null };
  }
  const launch = { ...saved.launch } as Adoption['launch'];
  const adoption: Adoption = {
    turnId: adopted.turnId,
    pid: adopted.pid,
    dir,
    launch,
    key: `sha256:${saved.key}`,
    from: { stdout: 0, stderr: 0 },
    cont: { stdout: false, stderr: false },
    ptyLine: { ptyLine: '', ptyLineOverlong: false },
    history: [],
    aborting: false,
    start: null,
    redeliver: [],
  };
  /** The handshake replayed from the journal: what the previous bridge wrote and what answered it. */
  const gate = launch.start && launch.lifetime === 'session' ? new StartGate(launch.start) : null;
  const interruptInput = 'input' in launch.interrupt ? launch.interrupt.input : undefined;
  const turnScan = adopted.turnId !== null;
  const wantHistory = adopted.turnId !== null && launch.inputAck !== undefined;
  const from = Math.min(adopted.fromSeq, adopted.turnFirstSeq ?? adopted.fromSeq);
  const unanswered = new Set<string>();
  /** The adopted turn's input while no stdin record shows it written (the handshake still held it). */
  let heldInput: string | undefined;
  /** `stdin` records since the kept CLI's spawn, counted, the latest kept as a keeper keeps them: one per write the keeper made, unless the kill fell between the two. */
  const journaled = new RecentInputs();
  /** One write to the kept CLI, as its `stdin` record says: the handshake, the held input, the turn's acks and abort follow it. */
  const written = (text: string, turnId: string | null, sinceSpawn: boolean): void => {
    if (gate?.closed && sinceSpawn) gate.written(text);
    if (turnId === adopted.turnId && text === heldInput) heldInput = undefined;
    if (adopted.turnId === null || turnId !== adopted.turnId) return;
    if (text === interruptInput) adoption.aborting = true; // abort's interrupt input (stop ends the turn 'stopped' before any restart)
    else if (wantHistory) adoption.history.push({ stdin: text });
  };
  for await (const batch of journal.read(from, journal.durableSeq, SERVER_LIMITS.maxReplayBatchRecords)) {
    for (const line of batch) {
      const k = line.indexOf('"kind":"') + 8;
      const output = line.startsWith('stdout"', k) || line.startsWith('stderr"', k) || line.startsWith('pty"', k);
      const turnRecord =
        line.startsWith('stdin"', k) || // counted against what the keeper wrote, below
        (turnScan && (line.startsWith('signal"', k) || line.startsWith('tool-call"', k) || line.startsWith('tool-result"', k)));
      if (!output && !turnRecord && !line.startsWith('turn-start"', k)) continue;
      const record = JSON.parse(line) as JournalRecord;
      if (record.kind === 'turn-start') {
        // The host tools the CLI may call: the latest start's, i.e. the adopted turn's (the MCP endpoint is new).
        tools.length = 0;
        tools.push(...(record.data.tools ?? []));
        if (record.turnId === adopted.turnId) heldInput = record.data.input;
        continue;
      }
      if (record.kind === 'tool-call') {
        if (record.turnId !== adopted.turnId) continue;
        const { callId, relay } = record.data;
        if (relay !== undefined && adopted.turnId !== null) relayed.set(callId, { callId, relay, turnId: adopted.turnId });
        else unanswered.add(callId);
        continue;
      }
      if (record.kind === 'tool-result') {
        unanswered.delete(record.data.callId);
        const call = relayed.get(record.data.callId);
        if (call) call.result = { output: record.data.output, isError: record.data.isError };
        continue;
      }
      if (record.kind === 'signal') {
        if (record.turnId === adopted.turnId && record.data.reason === 'abort') adoption.aborting = true;
        continue;
      }
      if (record.kind === 'stdin') {
        if (record.seq > adopted.spawnSeq) journaled.took(record.data.text);
        written(record.data.text, record.turnId, record.seq > adopted.spawnSeq);
        continue;
      }
      if (record.kind === 'pty') {
        if (record.seq <= adopted.spawnSeq) continue;
        if (record.data.off !== undefined) adoption.from.stdout = record.data.off;
        // The lines the supervisor matched so far, and the unfinished one it holds (supervisor.ts #onChunk).
        if (launch.lifetime !== 'session') continue;
        ptyLines(adoption.ptyLine, record.data.text, options.supervisor.limits.maxLineBytes, (complete) => {
          if (wantHistory && record.turnId === adopted.turnId) adoption.history.push({ stream: 'stdout', line: complete });
        });
        continue;
      }
      if (record.kind !== 'stdout' && record.kind !== 'stderr') continue;
      if (gate?.closed && record.kind === 'stdout' && record.seq > adopted.spawnSeq && record.data.cont !== true) gate.line(record.data.text);
      if (record.seq > adopted.spawnSeq && record.data.off !== undefined) {
        adoption.from[record.kind] = record.data.off;
        adoption.cont[record.kind] = record.data.cont === true;
      }
      if (wantHistory && record.turnId === adopted.turnId && record.data.cont !== true) {
        adoption.history.push({ stream: record.kind, line: record.data.text });
      }
    }
  }
  // Writes the keeper made whose `stdin` records died with the old bridge (sent in the tick that queued
  // them): journaled now, so the CLI's input and the journal agree, and a host settling an unacked
  // input finds it landed instead of sending it again.
  const delivered = await readKeeperInputs(dir);
  if (delivered?.mcp) adoption.secretsEnv = { [MCP_ENV_V1.urlEnvVar]: delivered.mcp.url, [MCP_ENV_V1.tokenEnvVar]: delivered.mcp.token };
  const missing = delivered === null ? 0 : delivered.count - journaled.count;
  if (delivered !== null && missing > 0 && missing <= delivered.recent.length) {
    for (const text of delivered.recent.slice(delivered.recent.length - missing)) {
      options.record({ kind: 'stdin', turnId: adopted.turnId, data: { text } });
      written(text, adopted.turnId, true);
    }
  }
  // The other way round: journaled writes the keeper never received (a write larger than the socket's
  // buffer was still in the dead bridge; the keeper drops a partial line). Written again, before anything new.
  if (delivered !== null && missing < 0 && -missing <= journaled.recent.length) adoption.redeliver = journaled.recent.slice(missing);
  for (const callId of unanswered) {
    options.record({
      kind: 'tool-result',
      turnId: adopted.turnId,
      data: {
        callId,
        isError: true,
        output: 'the bridge exited while this host tool call was pending; the CLI received a transport error for it, so no answer is accepted any more',
      },
    });
  }
  if (gate?.closed) {
    adoption.start = gate;
    if (heldInput && adopted.turnId !== null) gate.hold({ turnId: adopted.turnId, text: heldInput, ack: true }); // the old bridge's gate held it
  }
  await options.supervisor.adopt(adoption);
  return { tools, calls: [...relayed.values()], mcp: delivered?.mcp ?? null };
}
