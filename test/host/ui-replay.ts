// Folds given slices of one turn's parts into the UI message a user sees, through
// the REAL HarnessAgent of @ai-sdk/harness 1.0.x (its part translation, steps and
// toUIMessageStream) and `ai`'s readUIMessageStream (ui-fold.ts): the first slice
// is a prompt turn the agent suspends, each later one a continueStream of a
// fresh agent session from the state, folded onto the message so far. The
// harness under the agent only plays the slices back (the parts come from the
// adapters' translators over recorded journals: the subject is their fold), on
// a sandbox session that has nothing to run. Used by the every-cut check at the
// UI level (docs/guarantees.md#ui).
import { isDeepStrictEqual } from 'node:util';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import type { UIMessage } from 'ai';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { TurnTranslation, type TranslationSnapshot } from '../../host/adapter-kit/turn-translation.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { HarnessV1, HarnessV1ContinueTurnState, HarnessV1PromptControl, HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { foldUI, uiView, type Folded } from './ui-fold.ts';

type Part = HarnessV1StreamPart;

const harnessId = 'slice-replay';

/** A sandbox session for the agent's bookkeeping (its work dir's mkdir): nothing runs in it. */
const idleSandbox = {
  defaultWorkingDirectory: '/replay',
  run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
} as never;

/**
 * The harness: every turn (prompt or continue) emits the next queued slice; the last one then ends, any
 * other calls `emitted` and holds until the agent suspends it.
 */
function replayHarness(queue: Part[][], emitted: () => void): HarnessV1 {
  const session = (sessionId: string, isResume: boolean): HarnessV1Session => {
    let release: (() => void) | undefined;
    const turn = (emit: (part: Part) => void): HarnessV1PromptControl => {
      const parts = queue.shift() ?? [];
      const done = new Promise<void>((resolve) => {
        release = resolve;
        setImmediate(() => {
          for (const part of parts) emit(part);
          if (queue.length === 0) resolve();
          else emitted();
        });
      });
      return { done, submitToolResult: async () => undefined, submitToolApproval: async () => undefined };
    };
    const parked = { harnessId, specificationVersion: 'harness-v1' as const, data: {} as never };
    return {
      sessionId,
      isResume,
      doPromptTurn: async (options) => turn(options.emit),
      doContinueTurn: async (options) => turn(options.emit),
      doCompact: async () => undefined,
      doSuspendTurn: async () => (release?.(), { type: 'continue-turn', ...parked }),
      doDetach: async () => ({ type: 'resume-session', ...parked }),
      doStop: async () => ({ type: 'resume-session', ...parked }),
      doDestroy: async () => undefined,
    };
  };
  return {
    specificationVersion: 'harness-v1',
    harnessId,
    builtinTools: {},
    doStart: async (options) => session(options.sessionId, options.continueFrom !== undefined || options.resumeFrom !== undefined),
  };
}

/**
 * The UI message of a turn delivered in `slices` (one: uninterrupted): the first a prompt turn, suspended once
 * its parts are out (as a suspend at that cursor ends it); each further one continued by a new agent session
 * and folded onto the message so far. Stops at the first slice whose fold fails (`error`) or whose chunks the
 * schema refuses.
 */
export async function foldSlices(slices: ReadonlyArray<ReadonlyArray<Part>>): Promise<Folded> {
  let suspend: () => void = () => undefined;
  const agent = new HarnessAgent({ harness: replayHarness(slices.map((slice) => [...slice]), () => suspend()) as never });
  let session = await agent.createSession({ sessionId: 'turn', sandboxSession: idleSandbox });
  let message: UIMessage | undefined;
  const errors: string[] = [];
  let stepOpen = false;
  let stepShown = false;
  for (let i = 0; ; i++) {
    const current = session;
    const suspended = new Promise<unknown>((resolve, reject) => (suspend = () => current.suspendTurn().then(resolve, reject)));
    const result = i === 0 ? await agent.stream({ session, prompt: 'replayed' }) : await agent.continueStream({ session });
    const before = message?.parts.length ?? 0;
    const folded = await foldUI(result.toUIMessageStream(), message);
    folded.errors.unshift(...errors);
    // A continued stream opens a step of its own (the agent's start-step chunk). Where the earlier streams
    // left a step open whose step-start the message shows (readUIMessageStream shows it with the next chunk
    // that changes the message), the uninterrupted turn has no second step-start there.
    if (stepShown && folded.message?.parts[before]?.type === 'step-start') folded.message.parts.splice(before, 1);
    for (const { type } of folded.chunks as Array<{ type: string }>) {
      if (type === 'start-step') (stepOpen = true), (stepShown = false);
      else if (type === 'finish-step') (stepOpen = false), (stepShown = false);
      else if (stepOpen && !['start', 'finish', 'message-metadata', 'abort'].includes(type)) stepShown = true;
    }
    if (i === slices.length - 1 || folded.error !== undefined || folded.invalid.length > 0) return folded;
    errors.push(...folded.errors.slice(errors.length));
    message = folded.message;
    session = await agent.createSession({ sessionId: 'turn', continueFrom: (await suspended) as never, sandboxSession: idleSandbox });
  }
}

/**
 * The every-cut check at the UI level: the turn of `records` cut after every record k, the slice after k
 * taken both ways a continuing session takes it (restored from the kit's snapshot at k, and replayed from
 * the turn's start emitting after k: the same parts), folded onto the message of the parts before k. Each
 * folded message must equal the uninterrupted turn's (uiView), with no fold error and no refused chunk.
 * A fold error or a refused chunk always throws, naming the cut; a folded message that differs throws too
 * unless `strict` is false (then it is listed in `differing`). Returns the cuts checked (cuts inside an
 * approval exchange are left out: see insideApproval).
 */
export async function checkEveryCutFolds<S>(
  makeAdapter: () => CliAdapter<S>,
  records: ReadonlyArray<JournalRecord>,
  where: string,
  options: { strict?: boolean } = {},
): Promise<{ checked: number; differing: string[] }> {
  const turn = { turnId: records[0]?.turnId ?? 'turn-1', rerun: false };
  const live = new TurnTranslation(makeAdapter(), turn, 0, new Set());
  const snapshots = [JSON.parse(JSON.stringify(live.snapshot(0) ?? null)) as TranslationSnapshot | null];
  const bySeq = records.map((record) => {
    const parts = live.push(record);
    snapshots.push(JSON.parse(JSON.stringify(live.snapshot(record.seq) ?? null)) as TranslationSnapshot | null);
    return parts;
  });
  const whole = await foldSlices([bySeq.flat()]);
  if (whole.error !== undefined || whole.invalid.length > 0) throw new Error(`${where}: the uninterrupted turn does not fold: ${String(whole.error ?? JSON.stringify(whole.invalid))}`);
  const want = { ...uiView(whole.message), errors: whole.errors };
  const approvalCalls = new Set(bySeq.flat().flatMap((part) => (part.type === 'tool-approval-request' ? [part.toolCallId] : [])));
  let checked = 0;
  const differing: string[] = [];
  for (let k = 0; k <= records.length; k++) {
    const cursor = k === 0 ? 0 : records[k - 1]!.seq;
    // A cut inside an approval exchange (the call shown, its result not yet): the continued agent knows neither
    // the call its approval request names nor, once asked, the answer (toolApprovalContinuations), a flow this
    // check does not drive (docs/guarantees.md#ui): not counted.
    if (insideApproval(bySeq.slice(0, k).flat(), approvalCalls)) continue;
    checked++;
    const replayed = new TurnTranslation(makeAdapter(), turn, cursor, new Set());
    const tail = records.flatMap((record) => replayed.push(record));
    const snapshot = snapshots[k];
    if (snapshot) {
      const restored = TurnTranslation.restore(makeAdapter(), turn, { ...snapshot, seq: cursor }, new Set());
      const fromSnapshot = restored ? records.slice(k).flatMap((record) => restored.push(record)) : undefined;
      if (!isDeepStrictEqual(fromSnapshot, tail)) throw new Error(`${where}: cut after ${k}: the slice restored from the snapshot differs from the replayed one`);
    }
    const folded = await foldSlices([bySeq.slice(0, k).flat(), tail]);
    const at = `${where}: cut after ${k} of ${records.length} records`;
    if (folded.error !== undefined) throw new Error(`${at}: readUIMessageStream fails: ${String(folded.error)}`);
    if (folded.invalid.length > 0) throw new Error(`${at}: uiMessageChunkSchema refuses ${JSON.stringify(folded.invalid).slice(0, 400)}`);
    const got = { ...uiView(folded.message), errors: folded.errors };
    if (isDeepStrictEqual(got, want)) continue;
    if (options.strict !== false) throw new Error(`${at}: the folded message differs\n got ${JSON.stringify(got).slice(0, 1500)}\nwant ${JSON.stringify(want).slice(0, 1500)}`);
    differing.push(`cut after ${k}`);
  }
  return { checked, differing };
}

/** The parts before a cut show the call of an approval exchange (`approvalCalls`) but not yet its result. */
function insideApproval(parts: ReadonlyArray<Part>, approvalCalls: ReadonlySet<string>): boolean {
  const settled = new Set(parts.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])));
  return parts.some((part) => part.type === 'tool-call' && approvalCalls.has(part.toolCallId) && !settled.has(part.toolCallId));
}
