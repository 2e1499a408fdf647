// Sandboxes where programs usually put them, and a jail helper that dies (docs/security.md#modes):
// - under a fresh mkdtemp dir (0700, root's when the host runs as root), the default isolation runs the
//   first turn (the CLI in the namespace without a uid of its own, and the host is warned); an explicit
//   uid mode is refused at createSession, saying what to change;
// - a jail helper killed between two turns is replaced at the next spawn, never refusing every later one.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines } from '../../bridge/jail/jail-helper.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalIsolation } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../../host/testing/fixture/fixture-adapter.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';

const asRoot = process.getuid?.() === 0;
const hasBwrap = (() => {
  try {
    execFileSync('bwrap', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let root = '';
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-private-'));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

async function open(base: string, name: string, isolation: LocalIsolation = 'auto') {
  const provider = createLocalSandboxProvider({ root: join(base, 'sandboxes'), templatesRoot: join(base, 'templates'), isolation });
  const sandbox = await provider.createSession({ sessionId: name });
  cleanups.push(() => sandbox.destroy());
  const workDir = join(sandbox.defaultWorkingDirectory, 'work');
  await mkdir(workDir, { recursive: true });
  const diagnostics: HarnessV1Diagnostic[] = [];
  const session = await createBridgeHarness(fixtureAdapter()).doStart({ sessionId: name, sandboxSession: sandbox, sessionWorkDir: workDir, observability: { report: (d) => void diagnostics.push(d) } });
  cleanups.push(() => Promise.resolve(session.doDestroy()));
  const turn = async (prompt: string): Promise<string> => {
    const seen: string[] = [];
    const control = await session.doPromptTurn({ prompt, emit: (part) => void (part.type === 'text-delta' && seen.push(part.delta)) });
    await control.done;
    return seen.join('');
  };
  return { sandbox, session, diagnostics, turn };
}

/** The pids of jail helpers whose command line names `dir` (their bridge file is in it). */
function jailHelpers(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes('--jail-helper') && argv.some((a) => a.startsWith(dir))) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe('a sandbox under a 0700 dir (mkdtemp)', () => {
  it('auto: the first turn runs; the host is warned that the CLI has no uid of its own', async () => {
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    const { diagnostics, turn } = await open(join(root, 'auto'), 'private');
    expect(await turn('x LINES:2')).toBe('x LINES:2 #0\nx LINES:2 #1\n');
    const warnings = diagnostics.filter((d) => d.subsystem === 'harness-bridge.isolation');
    if (asRoot && hasBwrap) {
      expect(warnings).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining(`chmod o+x ${root}`) })]);
      expect(warnings[0]!.message).toMatch(/no uid of its own/);
    }
  });

  it.runIf(asRoot)('uid+namespace and uid, as root: createSession refuses, naming the dir and what to change', async () => {
    for (const isolation of ['uid+namespace', 'uid'] as const) {
      const provider = createLocalSandboxProvider({ root: join(root, isolation, 'sandboxes'), templatesRoot: join(root, isolation, 'templates'), isolation });
      const refused = await provider.createSession({ sessionId: 'x' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ name: 'LocalSandboxError', code: 'invalid-option', message: expect.stringContaining(`chmod o+x ${root}`) });
    }
  });
});

describe('the jail helper', () => {
  it.runIf(asRoot && hasBwrap)('killed between two turns: the next spawn starts a new one and the turn runs', async () => {
    const base = join(root, 'restart');
    await mkdir(base);
    await chmod(base, 0o711);
    await chmod(root, 0o711);
    try {
      const { sandbox, turn } = await open(base, 'restart');
      expect(await turn('a LINES:1')).toBe('a LINES:1 #0\n');
      const helpers = jailHelpers(sandbox.defaultWorkingDirectory);
      expect(helpers.length).toBe(1);
      process.kill(helpers[0]!, 'SIGKILL');
      expect(await turn('b LINES:1')).toBe('b LINES:1 #0\n');
      const again = jailHelpers(sandbox.defaultWorkingDirectory);
      expect(again.length).toBe(1);
      expect(again[0]).not.toBe(helpers[0]);
    } finally {
      await chmod(root, 0o700);
    }
  });

  it('its error reaches the user whole: every line but the stack frames, no line cut', () => {
    const stderr = [
      'node:internal/modules/cjs/loader:1210',
      '  throw err;',
      '  ^',
      '',
      "Error: Cannot find module '/tmp/hb-private-x/sandboxes/private/.harness-bridge/fixture/bridge.mjs'",
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
      "  code: 'MODULE_NOT_FOUND',",
    ].join('\n');
    expect(errorLines(stderr)).toBe(
      "node:internal/modules/cjs/loader:1210\n  throw err;\nError: Cannot find module '/tmp/hb-private-x/sandboxes/private/.harness-bridge/fixture/bridge.mjs'\n  code: 'MODULE_NOT_FOUND',",
    );
  });
});
