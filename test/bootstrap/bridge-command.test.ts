// The bridge's one command line: the sh form the host kit runs in a sandbox
// expands to exactly the argv the benchmark spawns, and Node accepts its flags.
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIDGE_MALLOC_TUNABLE, BRIDGE_NODE_FLAGS, bridgeArgv, bridgeEnv, bridgeShellCommand } from '../../bootstrap/bridge-command.mjs';
import { BRIDGE_MALLOC_TUNABLE as BRIDGE_SIDE_TUNABLE } from '../../bridge/malloc-tunable.ts';
import { connectClient, startBridge, tempDir } from '../bridge/helpers.ts';

describe('bridge command', () => {
  it('the sh command expands to bridgeArgv (values with spaces and quotes stay single arguments)', () => {
    const dir = tempDir('hb-cmd-');
    const printArgs = join(dir, 'print-args');
    writeFileSync(printArgs, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
    chmodSync(printArgs, 0o755);
    const values = { bridgeFile: join(dir, "my bridge's.mjs"), stateDir: join(dir, 'state "x"'), port: 4321, host: '0.0.0.0', recipeIdentity: 'sha256:ab cd' };
    for (const present of [{}, { host: true }, { host: true, recipeIdentity: true }]) {
      const result = spawnSync('sh', ['-c', bridgeShellCommand(present)], {
        env: {
          PATH: process.env.PATH,
          HB_NODE: printArgs,
          HB_FILE: values.bridgeFile,
          HB_STATE: values.stateDir,
          HB_PORT: String(values.port),
          HB_HOST: values.host,
          HB_RECIPE: values.recipeIdentity,
        },
        encoding: 'utf8',
      });
      expect(result.status).toBe(0);
      const expected = bridgeArgv({
        bridgeFile: values.bridgeFile,
        stateDir: values.stateDir,
        port: values.port,
        ...('host' in present ? { host: values.host } : {}),
        ...('recipeIdentity' in present ? { recipeIdentity: values.recipeIdentity } : {}),
      });
      expect(result.stdout.split('\n').slice(0, -1)).toEqual(expected);
    }
  });

  it('the bridge runs with its malloc tunable after the caller\'s, from sh and from argv alike', () => {
    const dir = tempDir('hb-cmd-');
    const printEnv = join(dir, 'print-env');
    writeFileSync(printEnv, '#!/bin/sh\nprintf "%s" "$GLIBC_TUNABLES"\n');
    chmodSync(printEnv, 0o755);
    for (const caller of [undefined, 'glibc.malloc.arena_max=2']) {
      const env = { PATH: process.env.PATH, HB_NODE: printEnv, HB_FILE: 'x', HB_STATE: 'y', HB_PORT: '0', ...(caller ? { GLIBC_TUNABLES: caller } : {}) };
      const result = spawnSync('sh', ['-c', bridgeShellCommand()], { env, encoding: 'utf8' });
      const expected = caller ? `${caller}:${BRIDGE_MALLOC_TUNABLE}` : BRIDGE_MALLOC_TUNABLE;
      expect(result.stdout).toBe(expected);
      expect(bridgeEnv(caller ? { GLIBC_TUNABLES: caller } : {})).toEqual({ GLIBC_TUNABLES: expected });
    }
    expect(BRIDGE_SIDE_TUNABLE).toBe(BRIDGE_MALLOC_TUNABLE);
  });

  it('the CLI does not inherit the bridge\'s malloc tunable (the caller\'s own stays)', async () => {
    const printTunables = [process.execPath, '-e', 'console.log(JSON.stringify(process.env.GLIBC_TUNABLES ?? null))'];
    for (const [caller, seen] of [[undefined, null], ['glibc.malloc.arena_max=2', 'glibc.malloc.arena_max=2']] as const) {
      const bridge = await startBridge({ env: bridgeEnv(caller ? { GLIBC_TUNABLES: caller } : {}) });
      try {
        const { client } = await connectClient(bridge);
        await client.attach(0);
        await client.request({ type: 'start', id: 's1', turnId: 't1', launch: { argv: printTunables } });
        const line = await client.waitForRecord((r) => r.kind === 'stdout', 20_000);
        expect(line.kind === 'stdout' && JSON.parse(line.data.text)).toBe(seen);
        await client.close();
      } finally {
        await bridge.kill();
      }
    }
  }, 60_000);

  it('node accepts the flags', () => {
    const result = spawnSync(process.execPath, [...BRIDGE_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('ok');
  });
});
