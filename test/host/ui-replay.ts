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

/** One stream's parts, and what ends that stream: the turn's end, a suspend at a cut, or the agent's own pause at an approval request. */
export type Slice = { parts: Part[]; then: 'end' | 'cut' | 'approval' };

/**
 * The harness: every turn (prompt or continue) emits the next queued slice. After a slice ending at a cut it
 * calls `emitted` and holds until the agent suspends it; after one ending at an approval request it holds (the
 * agent pauses its stream there itself, and the next continueStream answers it); after the last it ends.
 */
function replayHarness(queue: Slice[], emitted: () => void): HarnessV1 {
  const session = (sessionId: string, isResume: boolean): HarnessV1Session => {
    let release: (() => void) | undefined;
    const turn = (emit: (part: Part) => void): HarnessV1PromptControl => {
      release?.(); // an earlier turn held at an approval is over: this one goes on from there
      const slice = queue.shift() ?? { parts: [], then: 'end' };
      const done = new Promise<void>((resolve) => {
        release = resolve;
        setImmediate(() => {
          for (const part of slice.parts) emit(part);
          if (slice.then === 'end') resolve();
          else if (slice.then === 'cut') emitted();
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
 * The UI message of a turn delivered in `slices` (one: uninterrupted): the first a prompt turn. A slice ending
 * at a cut is suspended once its parts are out (as a suspend at that cursor ends it) and the next is continued
 * by a new agent session from the state; one ending at an approval request is paused by the agent itself and
 * the next continued in the same session. Each continueStream answers the approvals asked so far (`answers`, by
 * approvalId: the journal's answer) through toolApprovalContinuations, as an application does, and is folded
 * onto the message so far. Stops at the first slice whose fold fails (`error`) or whose chunks the schema refuses.
 */
export async function foldSlices(slices: ReadonlyArray<Slice>, answers: ReadonlyMap<string, boolean> = new Map()): Promise<Folded> {
  let suspend: () => void = () => undefined;
  const agent = new HarnessAgent({ harness: replayHarness(slices.map((slice) => ({ ...slice, parts: [...slice.parts] })), () => suspend()) as never });
  let session = await agent.createSession({ sessionId: 'turn', sandboxSession: idleSandbox });
  let message: UIMessage | undefined;
  const errors: string[] = [];
  let stepOpen = false;
  let stepShown = false;
  let asked: string[] = [];
  for (let i = 0; ; i++) {
    const current = session;
    const suspended = new Promise<unknown>((resolve, reject) => (suspend = () => current.suspendTurn().then(resolve, reject)));
    const toolApprovalContinuations = asked.map((approvalId) => ({ type: 'tool-approval-response' as const, approvalId, approved: answers.get(approvalId) ?? true }));
    asked = [];
    const result = i === 0 ? await agent.stream({ session, prompt: 'replayed' }) : await agent.continueStream({ session, toolApprovalContinuations });
    const before = message?.parts.length ?? 0;
    const folded = await foldUI(result.toUIMessageStream(), message);
    folded.errors.unshift(...errors);
    // A continued stream opens a step of its own (the agent's start-step chunk). Where the earlier streams
    // left a step open whose step-start the message shows (readUIMessageStream shows it with the next chunk
    // that changes the message), the uninterrupted turn has no second step-start there.
    if (stepShown && folded.message?.parts[before]?.type === 'step-start') folded.message.parts.splice(before, 1);
    for (const chunk of folded.chunks as Array<{ type: string; approvalId?: string }>) {
      if (chunk.type === 'start-step') (stepOpen = true), (stepShown = false);
      else if (chunk.type === 'finish-step') (stepOpen = false), (stepShown = false);
      else if (stepOpen && !['start', 'finish', 'message-metadata', 'abort'].includes(chunk.type)) stepShown = true;
      if (chunk.type === 'tool-approval-request' && chunk.approvalId !== undefined) asked.push(chunk.approvalId);
    }
    if (i === slices.length - 1 || folded.error !== undefined || folded.invalid.length > 0) return folded;
    errors.push(...folded.errors.slice(errors.length));
    message = folded.message;
    if (slices[i]!.then === 'cut') session = await agent.createSession({ sessionId: 'turn', continueFrom: (await suspended) as never, sandboxSession: idleSandbox });
  }
}

/**
 * `parts` as the streams an application sees: a stream ends at each approval request not yet asked (the agent
 * pauses there until continueStream answers it; `asked` gathers them across calls), the last at `then`.
 */
export function streamsOf(parts: ReadonlyArray<Part>, then: 'end' | 'cut', asked: Set<string>): Slice[] {
  const slices: Slice[] = [{ parts: [], then }];
  for (const part of parts) {
    slices.at(-1)!.parts.push(part);
    if (part.type === 'tool-approval-request' && !asked.has(part.approvalId)) {
      asked.add(part.approvalId);
      slices.at(-1)!.then = 'approval';
      slices.push({ parts: [], then });
    }
  }
  // Nothing after the last approval request: that stream ends at the request (a cut there suspends the pause).
  if (slices.length > 1 && slices.at(-1)!.parts.length === 0) {
    slices.pop();
    if (then === 'cut') slices.at(-1)!.then = 'cut';
  }
  return slices;
}

/** The calls and approvals the journal answers in `records`, as the session notes them before translating a batch (TurnConsumer.lookAhead). */
function lookAhead(translation: TurnTranslation<unknown>, records: ReadonlyArray<JournalRecord>): void {
  for (const record of records) if (record.kind === 'tool-result' || record.kind === 'approval') translation.answeredAhead.add(record.data.callId);
}

/** The journal's answer to each approval (an `approval` record, by its callId, the request's approvalId). */
function answersOf(records: ReadonlyArray<JournalRecord>): Map<string, boolean> {
  return new Map(records.flatMap((record) => (record.kind === 'approval' ? [[record.data.callId, record.data.approved] as const] : [])));
}

/**
 * The every-cut check at the UI level: the turn of `records` cut after every record k, the slice after k
 * taken both ways a continuing session takes it (restored from the kit's snapshot at k, and replayed from
 * the turn's start emitting after k: the same parts, the calls and approvals delivered before k and not
 * answered there delivered once more, as the session does), folded onto the message of the parts before k.
 * Approvals are answered as an application answers them (continueStream with toolApprovalContinuations, the
 * journal's answer), in the uninterrupted turn as after every cut. Each folded message must equal the
 * uninterrupted turn's (uiView), with no fold error and no refused chunk. A fold error or a refused chunk
 * always throws, naming the cut; a folded message that differs throws too unless `strict` is false (then it
 * is listed in `differing`). Returns the cuts checked: every one.
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
  const unanswered = [live.unanswered()];
  const bySeq = records.map((record) => {
    const parts = live.push(record);
    snapshots.push(JSON.parse(JSON.stringify(live.snapshot(record.seq) ?? null)) as TranslationSnapshot | null);
    unanswered.push(live.unanswered());
    return parts;
  });
  const answers = answersOf(records);
  const whole = await foldSlices(streamsOf(bySeq.flat(), 'end', new Set()), answers);
  if (whole.error !== undefined || whole.invalid.length > 0) throw new Error(`${where}: the uninterrupted turn does not fold: ${String(whole.error ?? JSON.stringify(whole.invalid))}`);
  const want = { ...uiView(whole.message), errors: whole.errors };
  let checked = 0;
  const differing: string[] = [];
  for (let k = 0; k <= records.length; k++) {
    const cursor = k === 0 ? 0 : records[k - 1]!.seq;
    checked++;
    // The approvals the head's streams asked are answered by the application (the session notes an answer when
    // the host submits it): delivered once more are only the calls and approvals no one answered.
    const asked = new Set<string>();
    const head = streamsOf(bySeq.slice(0, k).flat(), 'cut', asked);
    const redeliver = new Set(unanswered[k]!.filter((id) => !asked.has(id)));
    const replayed = new TurnTranslation(makeAdapter(), turn, cursor, redeliver);
    lookAhead(replayed, records);
    const tail = records.flatMap((record) => replayed.push(record));
    const snapshot = snapshots[k];
    if (snapshot) {
      const restored = TurnTranslation.restore(makeAdapter(), turn, { ...snapshot, seq: cursor }, redeliver);
      if (restored) lookAhead(restored, records.slice(k));
      const fromSnapshot = restored ? [...restored.takeOwed(), ...records.slice(k).flatMap((record) => restored.push(record))] : undefined;
      if (!isDeepStrictEqual(fromSnapshot, tail)) throw new Error(`${where}: cut after ${k}: the slice restored from the snapshot differs from the replayed one`);
    }
    const folded = await foldSlices([...head, ...streamsOf(tail, 'end', asked)], answers);
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
