// The bridge's token is handed over before the launch (host/reach/bridge-process.ts, writeToken): a short-lived
// shell writes it into a 0600 file of the state dir, and the bridge, which reads it there, never has it in its
// environment. A state dir that cannot be made fails the start with the typed error naming the hand-over.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBridgeFile } from '../../bootstrap/recipe.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { spawnBridge } from '../../host/reach/bridge-process.ts';
import { BridgeSessionError } from '../../host/session/errors.ts';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hb-token-handover-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('the token handed over into the state dir', () => {
  it('lands in a 0600 file the bridge renames to token; the bridge environment holds neither the token nor HB_TOKEN', async () => {
    const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes') });
    const sandbox = await provider.createSession({ sessionId: 'handover' });
    const stateDir = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'state-a');
    try {
      const { ready, token } = await spawnBridge({ sandbox, nodeCommand: process.execPath, bridgeFile: defaultBridgeFile(), stateDir, port: 0, readyTimeoutMs: 60_000, isolation: { mode: 'none' } });
      expect(readFileSync(join(stateDir, 'token'), 'utf8')).toBe(token);
      expect(statSync(join(stateDir, 'token')).mode & 0o777).toBe(0o600);
      expect(statSync(stateDir).mode & 0o066).toBe(0);
      const environ = readFileSync(`/proc/${ready.pid}/environ`, 'utf8');
      expect(environ.includes(token)).toBe(false);
      expect(environ.split('\0').some((entry) => entry.startsWith('HB_TOKEN='))).toBe(false);
      // The hand-over's umask 077 stays in its own shell: the bridge has the sandbox's own.
      const umask = /^Umask:\s*(\d+)$/m.exec(readFileSync(`/proc/${ready.pid}/status`, 'utf8'))?.[1];
      expect(umask).toBe(process.umask().toString(8).padStart(4, '0'));
      process.kill(ready.pid!, 'SIGTERM');
    } finally {
      await sandbox.destroy();
    }
  });

  it('a state dir that cannot be made: bridge-start-failed naming the hand-over and why the shell could not', async () => {
    const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes') });
    const sandbox = await provider.createSession({ sessionId: 'blocked' });
    const blocker = join(sandbox.defaultWorkingDirectory, 'a-file');
    writeFileSync(blocker, 'not a dir');
    try {
      const error = await spawnBridge({ sandbox, nodeCommand: process.execPath, bridgeFile: defaultBridgeFile(), stateDir: join(blocker, 'state'), port: 0, readyTimeoutMs: 60_000, isolation: { mode: 'none' } }).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BridgeSessionError);
      expect((error as BridgeSessionError).code).toBe('bridge-start-failed');
      expect((error as Error).message).toMatch(/could not write the bridge token into .*a-file\/state/);
      expect((error as Error).message).toMatch(/mkdir: .*Not a directory/);
    } finally {
      await sandbox.destroy();
    }
  });
});
