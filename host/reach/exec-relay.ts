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
import { ExecSocket, type ExecProcess } from './exec-socket.ts';

/** The relay's command line; values come from the environment, never spliced into the string. */
export const relayShellCommand = 'exec "$HB_NODE" "$HB_FILE" --relay "$HB_PORT"';

type StdinSpawn = (options: Parameters<SandboxSession['spawn']>[0] & { stdin?: boolean }) => PromiseLike<ExecProcess>;

export type ExecRelayOptions = {
  readonly sandbox: SandboxSession;
  /** The Node binary inside the sandbox. */
  readonly nodeCommand: string;
  /** The bridge file inside the sandbox (its relay mode carries the bytes). */
  readonly bridgeFile: string;
};

/** A connection factory for the bridge on `port` inside the sandbox, over a fresh relay process. */
export function execRelayConnection(options: ExecRelayOptions, port: number): CreateConnection {
  const spawn = options.sandbox.spawn as StdinSpawn;
  return () =>
    new ExecSocket(() =>
      spawn({
        command: relayShellCommand,
        env: { HB_NODE: options.nodeCommand, HB_FILE: options.bridgeFile, HB_PORT: String(port) },
        stdin: true,
      }),
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
