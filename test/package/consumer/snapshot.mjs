// A turn with the harness setting startupSnapshot: the recipe builds the bridge's V8 startup
// snapshot in the sandbox, and the session's bridge starts from it. Reports the turn's text and the
// bridge's argv (from /proc: Linux), read while the session lives.
import { readdirSync, readFileSync } from 'node:fs';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness, createLocalSandboxProvider } from 'harness-bridge';
import { fixtureAdapter } from 'harness-bridge/testing';
import { allText, report } from './agent.mjs';

const agent = new HarnessAgent({
  harness: createBridgeHarness(fixtureAdapter(), { startupSnapshot: true }),
  sandbox: createLocalSandboxProvider(),
});

/**
 * The argv of each bridge process under this run's cache dir (the local provider's sandboxes). A child the bridge
 * is forking that moment (a keeper started ahead) shows the bridge's argv until it execs: one whose parent matched is not counted.
 */
function bridgeArgvs() {
  const found = new Map();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (argv.includes('--state-dir') && argv.some((arg) => arg.startsWith(process.env.XDG_CACHE_HOME ?? '/nowhere'))) found.set(pid, { ppid, argv });
    } catch {
      // ended meanwhile
    }
  }
  return [...found.values()].filter(({ ppid }) => !found.has(ppid)).map(({ argv }) => argv);
}

const session = await agent.createSession();
const text = await allText(await agent.stream({ session, prompt: 'snapshot LINES:3' }));
const bridges = bridgeArgvs();
await session.destroy();
report({ text, bridges: bridges.map((argv) => argv.slice(1, 4)) });
