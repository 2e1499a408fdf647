// A spawned process's handshake (launch `start`, docs/bridge-internals.md#process-start) and the
// stdin placeholders a launch declares (launch `stdinSecrets`). The gate writes each start step
// and holds every later write (the next step, the turn's input, input frames) until a whole
// stdout line meets the step's `until`; held writes then go out in order. The supervisor owns
// turns and records; this file only decides what is written when.
import type { LaunchSpec, StartStep } from '../../protocol/v1/launch-spec.ts';
import { OPEN_BRACE, parseOrUndefined, valueAt } from './output-line.ts';

/** How a held write ended: written (its `stdin` record emitted), or never to be written. */
export type GateWriteResult = { ok: true } | { ok: false; code: 'no-process'; message: string };

/**
 * One write the gate lets through: the text as journaled, and the turn it belongs to. `done` (an input
 * frame's): told once it is written or can never be, so the frame is acked only then (docs/bridge-internals.md#process-start).
 */
export type GateWrite = { turnId: string | null; text: string; ack: boolean; done?: (result: GateWriteResult) => void };

export class StartGate {
  readonly #steps: StartStep[];
  #waiting: StartStep['until'] | undefined;
  readonly #held: GateWrite[] = [];

  constructor(steps: ReadonlyArray<StartStep>) {
    this.#steps = [...steps];
  }

  /** True while writes are held (a step still waits for its line). */
  get closed(): boolean {
    return this.#waiting !== undefined || this.#steps.length > 0;
  }

  /** Writes the steps that need no wait, up to the first one that does; `write` performs one write. */
  advance(turnId: string | null, write: (w: GateWrite) => void): void {
    while (this.#waiting === undefined && this.#steps.length > 0) {
      const step = this.#steps.shift()!;
      write({ turnId, text: step.input, ack: false });
      this.#waiting = step.until;
    }
    if (this.#waiting === undefined) for (const held of this.#held.splice(0)) write(held);
  }

  /** Holds a write while the gate is closed; false: the gate is open, write it now. */
  hold(w: GateWrite): boolean {
    if (!this.closed) return false;
    this.#held.push(w);
    return true;
  }

  /** The process will never take the held writes (it exited, or is being stopped): they are dropped, each `done` told `why`. */
  drop(why: string): void {
    for (const w of this.#held.splice(0)) w.done?.({ ok: false, code: 'no-process', message: `${why} before its launch handshake completed; the input was not written` });
  }

  /**
   * A write a previous bridge journaled to this process (adoption reads the journal back): the next step's
   * input counts as written, so its step waits for its line instead of being written again.
   */
  written(text: string): void {
    if (this.#waiting === undefined && this.#steps[0]?.input === text) this.#waiting = this.#steps.shift()!.until;
  }

  /** A whole stdout line: true when it opened the waiting step (call advance next). */
  line(text: string): boolean {
    const until = this.#waiting;
    if (until === undefined || text.charCodeAt(0) !== OPEN_BRACE) return false;
    const value = parseOrUndefined(text);
    if (value === undefined || !until.every((c) => valueAt(value, c.path) === c.equals)) return false;
    this.#waiting = undefined;
    return true;
  }
}

/**
 * The text a process's stdin gets for `text` (as journaled): each `${NAME}` of the launch's
 * `stdinSecrets` replaced by that env value of the spawned CLI, escaped as JSON string contents.
 * A name the env lacks is left as written.
 */
export function withStdinSecrets(text: string, launch: LaunchSpec, env: Record<string, string> | undefined = launch.env): string {
  const names = launch.stdinSecrets;
  if (!names || names.length === 0 || !text.includes('${')) return text;
  let out = text;
  for (const name of names) {
    const value = env?.[name];
    if (value === undefined) continue;
    out = out.split(`\${${name}}`).join(JSON.stringify(value).slice(1, -1));
  }
  return out;
}
