// What stage 1 (main.ts) hands stage 2 (after-ready.ts) after the ready line. Types only: both
// stages and adopt-survivor.ts import them from here, so neither stage imports the other.
import type { Server, Socket } from 'node:net';
import type { KeptInfo } from './journal/turn-log.ts';
import type { EarlyLog } from './early-log.ts';
import type { RecordPath } from './record-path.ts';
import type { StopSignals } from './stop-signals.ts';
import type { JailArgs } from './jail/jail-args.ts';
import type { ChildProcess } from 'node:child_process';

/** A surviving CLI (launch `survive`) stage 1 decided to adopt, with the unfinished turn running on it (if any). */
export type Adopted = KeptInfo & { turnId: string | null; turnFirstSeq: number | undefined };

export type AfterReadyContext = {
  readonly stateDir: string;
  readonly host: string;
  readonly boundPort: number;
  readonly recipeIdentity?: string;
  readonly token: string;
  readonly bridgeId: string;
  /** How CLIs are to be isolated (--isolation, --require-isolation, --cli-user, --network-policy, --srt). */
  readonly jail: JailArgs;
  /** The jail helper process stage 1 started for a namespace (jail/early-helper.ts): stage 2 adopts it or ends it. */
  readonly earlyJailHelper: Promise<ChildProcess | undefined>;
  /** The TCP listener main.ts bound (connections accepted paused). */
  readonly listener: Server;
  /** CLI line → journal → socket: record(), the journal, the turn log; stage 2 connects the supervisor and the server. */
  readonly recordPath: RecordPath;
  /** The fdatasync main.ts started right after the ready line (a fresh journal's creation included). */
  readonly synced: Promise<void>;
  readonly unfinishedTurnId: string | undefined;
  /** A surviving CLI (launch `survive`) to re-adopt, journaled in this bridge's `bridge-start`. */
  readonly adopted?: Adopted;
  /** The main log, queued until stage 2 hands it the logger. */
  readonly log: EarlyLog;
  /** SIGTERM/SIGINT, installed by main.ts; stage 2 connects the server. */
  readonly stopSignals: StopSignals;
  /** Connections that arrived before the server was attached (paused, unread), and the listener that holds them. */
  readonly held: Socket[];
  readonly hold: (socket: Socket) => void;
  readonly removeStateDir: () => void;
};
