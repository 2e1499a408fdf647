// The chaos kit's faults over the exec transport (docs/remote-providers.md#exec-transport):
// a local sandbox session with its port methods removed, so every connection to
// the bridge is a relay spawned over the sandbox's own spawn stdio, and a
// ChaosProxy over those relays — dropAll() cuts every live exec stream (its
// stdout errors at once, the relay is killed), stall(ms) holds bridge→host
// bytes on each (its stdout is not read). The same lanes then run over it.
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { relayShellCommand } from '../../host/reach/exec-relay.ts';
import type { LocalSandboxProcess } from '../../host/sandbox/local/process.ts';
import type { ChaosProxy } from './chaos-kit.ts';

type Relay = { process: LocalSandboxProcess; dropped: boolean; stall: Promise<void> | null; wake: () => void };

export function execChaos(sandbox: HarnessV1NetworkSandboxSession): { session: HarnessV1NetworkSandboxSession; proxy: ChaosProxy } {
  const live = new Set<Relay>();
  const timers = new Set<NodeJS.Timeout>();
  const restricted = sandbox.restricted() as ReturnType<HarnessV1NetworkSandboxSession['restricted']> & {
    spawn: (options: { command: string; stdin?: boolean }) => Promise<LocalSandboxProcess>;
  };
  const spawn = async (options: { command: string; stdin?: boolean }) => {
    const process = await restricted.spawn(options);
    if (!options.command.startsWith(relayShellCommand)) return process; // a relay, in any framing
    const relay: Relay = { process, dropped: false, stall: null, wake: () => undefined };
    live.add(relay);
    void Promise.resolve(process.wait()).finally(() => live.delete(relay));
    const reader = process.stdout.getReader();
    const stdout = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (relay.stall) await relay.stall;
        if (relay.dropped) return controller.error(new Error('chaos: exec stream dropped'));
        // A drop while waiting for bytes ends the read at once (the relay's kill follows).
        const next = await Promise.race([reader.read(), new Promise<'dropped'>((resolve) => (relay.wake = () => resolve('dropped')))]);
        if (next === 'dropped' || relay.dropped) return controller.error(new Error('chaos: exec stream dropped'));
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return { ...process, stdout };
  };
  const { getPortEndpoint: _endpoint, getPortUrl: _url, ...rest } = sandbox as HarnessV1NetworkSandboxSession & Record<string, unknown>;
  const session = { ...rest, restricted: () => ({ ...restricted, spawn }) } as unknown as HarnessV1NetworkSandboxSession;
  const proxy: ChaosProxy = {
    url: 'exec',
    dropAll() {
      const relays = [...live];
      for (const relay of relays) {
        live.delete(relay);
        relay.dropped = true;
        relay.wake();
        void relay.process.kill();
      }
      return relays.length;
    },
    stall(ms) {
      let count = 0;
      for (const relay of live) {
        if (relay.stall) continue;
        count++;
        relay.stall = new Promise((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            relay.stall = null;
            resolve();
          }, ms);
          timers.add(timer);
        });
      }
      return count;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all([...live].map((relay) => relay.process.kill()));
      live.clear();
    },
  };
  return { session, proxy };
}
