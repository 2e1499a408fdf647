// What a restarted bridge hands its supervisor to take over a surviving CLI (launch `survive`):
// adopt-survivor.ts builds it from the keeper dir and the journal, Supervisor.adopt() runs it.
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { OutputStream } from '../supervisor/output-line.ts';
import type { StartGate } from '../supervisor/process-start.ts';
import type { ProcEntry } from '../supervisor/proc-entry.ts';
import type { KeptStart } from './kept-process.ts';

/** A surviving CLI a restarted bridge takes over (see Supervisor.adopt()). */
export type Adoption = {
  /** The unfinished turn running on it, or null (a session process between turns). */
  turnId: string | null;
  pid: number;
  dir: string;
  launch: LaunchSpec;
  /** The saved reuse identity (a hash: env is never written to disk). */
  key: string;
  /** Capture offsets after the last journaled piece of each stream, and whether that piece was `cont`. */
  from: KeptStart;
  cont: { stdout: boolean; stderr: boolean };
  /** A pty CLI's unfinished output line, as the supervisor holds it for turnEnd matching (proc-entry.ts). */
  ptyLine: Pick<ProcEntry, 'ptyLine' | 'ptyLineOverlong'>;
  /** The turn's stdin writes and complete output lines so far, in order, for its inputAck pending set (launch.inputAck only). */
  history: Array<{ stdin: string } | { stream: OutputStream; line: string }>;
  /** The previous bridge had begun aborting the turn (its interrupt is journaled). */
  aborting: boolean;
  /**
   * The launch's handshake (launch `start`) where the journal leaves it: steps written and answered are
   * done, so later writes are not held behind them; null without one, or once it finished.
   */
  start: StartGate | null;
  /** Writes the journal holds that never reached the keeper (the dead bridge still held them): written again, first. */
  redeliver: string[];
  /**
   * What stdin placeholders (launch `stdinSecrets`) are substituted from: the CLI's MCP URL and token,
   * as its keeper says them. The rest of its env is never on disk, so other placeholders stay as written.
   */
  secretsEnv?: Record<string, string>;
};
