// The bridge's one command line: the sh form the host kit runs in a sandbox
// expands to exactly the argv the benchmark spawns, and Node accepts its flags.
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIDGE_NODE_FLAGS, bridgeArgv, bridgeShellCommand } from '../../bootstrap/bridge-command.mjs';
import { tempDir } from '../bridge/helpers.ts';

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

  it('node accepts the flags', () => {
    const result = spawnSync(process.execPath, [...BRIDGE_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('ok');
  });
});
