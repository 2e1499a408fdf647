// The exec transport: how the host reaches a bridge in a sandbox that exposes
// no port (no getPortEndpoint/getPortUrl) — any engine with exec and files
// (docs/remote-providers.md#exec-transport). Each connection (a probe, each
// channel connect) spawns the bridge file's relay mode through the sandbox
// session's own `spawn` with stdin, and the WebSocket runs over that
// process's stdio (exec-socket.ts). The URL is nominal: it names the bridge as
// the relay reaches it, on the sandbox's loopback, and goes nowhere from here.
// Everything above the socket (upgrade and token, attach, replay, the ladder)
// is the same as over a port.
import type { CreateConnection } from '../channel/index.ts';
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import { relayFramingFlag, type RelayFraming } from '../../protocol/v1/relay-framing.ts';
import { ExecSocket, type ExecProcess } from './exec-socket.ts';

/** The relay's command line; values come from the environment, never spliced into the string. */
export const relayShellCommand = 'exec "$HB_NODE" "$HB_FILE" --relay "$HB_PORT"';

/** The relay's command line for a framing (protocol/v1/relay-framing.ts): bytes is relayShellCommand. */
export function relayCommand(framing: RelayFraming): string {
  return framing === 'bytes' ? relayShellCommand : `${relayShellCommand} ${relayFramingFlag[framing]}`;
}

/**
 * How the exec transport uses the sandbox's exec stdio (createBridgeHarness's `execTransport`). For
 * hosted exec APIs: `framing: 'base64-lines'` when output arrives as strings; `batchWritesMs` /
 * `maxBatchBytes` when each stdin write is billed or rate-limited (writes within the window go as one).
 */
export type ExecTransportSettings = {
  /** Default 'bytes' (docker exec, the local provider: byte-exact stdio). */
  readonly framing?: RelayFraming;
  /** Hold small writes this long and send them as one stdin write. Default 0: each write at once. */
  readonly batchWritesMs?: number;
  /** A batch is sent at once when it reaches this many bytes. Default 256 KiB. */
  readonly maxBatchBytes?: number;
};

type StdinSpawn = (options: Parameters<SandboxSession['spawn']>[0] & { stdin?: boolean }) => PromiseLike<ExecProcess>;

export type ExecRelayOptions = {
  readonly sandbox: SandboxSession;
  readonly transport?: ExecTransportSettings;
  /** The Node binary inside the sandbox. */
  readonly nodeCommand: string;
  /** The bridge file inside the sandbox (its relay mode carries the bytes). */
  readonly bridgeFile: string;
};

/** A connection factory for the bridge on `port` inside the sandbox, over a fresh relay process. */
export function execRelayConnection(options: ExecRelayOptions, port: number): CreateConnection {
  const spawn = options.sandbox.spawn as StdinSpawn;
  const framing = options.transport?.framing ?? 'bytes';
  return () =>
    new ExecSocket(
      () =>
        spawn({
          command: relayCommand(framing),
          env: { HB_NODE: options.nodeCommand, HB_FILE: options.bridgeFile, HB_PORT: String(port) },
          stdin: true,
        }),
      {
        framing,
        ...(options.transport?.batchWritesMs === undefined ? {} : { batchWritesMs: options.transport.batchWritesMs }),
        ...(options.transport?.maxBatchBytes === undefined ? {} : { maxBatchBytes: options.transport.maxBatchBytes }),
      },
    );
}

/** The nominal URL of a bridge reached through the relay: its own loopback port, as the relay dials it. */
export function execRelayUrl(port: number): string {
  return `ws://127.0.0.1:${port}/`;
}

/**
 * The spawn of this sandbox can carry a connection: it gives a process `stdin`
 * (spawn's `stdin: true`, which the contract's SandboxProcess does not have).
 * Spawns one short process to find out, once per sandbox session object.
 */
export async function requireSpawnStdin(sandbox: SandboxSession, harnessId: string): Promise<void> {
  let known = checked.get(sandbox);
  if (known === undefined) {
    known = probeStdin(sandbox);
    checked.set(sandbox, known);
  }
  if (await known) return;
  throw new HarnessCapabilityUnsupportedError({
    message:
      `${harnessId} over harness-bridge needs to reach its bridge inside the sandbox, and this sandbox session offers neither a port ` +
      '(getPortEndpoint/getPortUrl) nor a spawn with stdin (spawn({ stdin: true }), the exec transport). Pass a network sandbox ' +
      'session, a sandbox whose spawn gives stdin, or createBridgeHarness(adapter, { resolvePort }) when the sandbox shares a network with this host.',
    harnessId,
  });
}

const checked = new WeakMap<SandboxSession, Promise<boolean>>();

async function probeStdin(sandbox: SandboxSession): Promise<boolean> {
  const process = await (sandbox.spawn as StdinSpawn)({ command: 'cat >/dev/null', stdin: true });
  const stdin = process.stdin;
  if (stdin) await stdin.close().catch(() => undefined);
  else await process.kill();
  await Promise.all([process.stdout.cancel().catch(() => undefined), process.stderr.cancel().catch(() => undefined)]);
  await process.wait();
  return stdin !== undefined;
}
