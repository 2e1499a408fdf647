// The CLI installer takes any CLI an adapter declares (issue 16 item 3), not only the three pins:
// cache paths for a `{ package, version, bin }` spec, the reference pins keeping their cache dirs,
// refusing specs that would read as npm options or climb out of the cache, and the reference
// adapters declaring exactly the pins. (Installing for real is the E2E suites' beforeAll.)
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { codexAdapter } from '../../../host/adapters/codex/codex.ts';
import { piAdapter } from '../../../host/adapters/pi/pi.ts';
import { claudeCodeAcpAdapter, codexAcpAdapter, geminiCliAdapter, qwenCodeAdapter } from '../../../host/adapters/acp/agents.ts';
import { CLIS, cliPaths, ensureCli } from '../../../host/cli/install-clis.mjs';

const cache = '/tmp/hb-cli-cache-test';
let saved: string | undefined;
beforeEach(() => {
  saved = process.env.HARNESS_BRIDGE_CLI_CACHE;
  process.env.HARNESS_BRIDGE_CLI_CACHE = cache;
});
afterEach(() => {
  if (saved === undefined) delete process.env.HARNESS_BRIDGE_CLI_CACHE;
  else process.env.HARNESS_BRIDGE_CLI_CACHE = saved;
});

describe('install-clis: any declared CLI', () => {
  it('a spec gets a cache dir named after its package and version; its bin under node_modules/.bin', () => {
    expect(cliPaths({ package: '@acme/agent-cli', version: '1.2.3-beta.1', bin: 'acme' })).toEqual({
      dir: join(cache, 'acme+agent-cli-1.2.3-beta.1'),
      binPath: join(cache, 'acme+agent-cli-1.2.3-beta.1', 'node_modules', '.bin', 'acme'),
      markerPath: join(cache, 'acme+agent-cli-1.2.3-beta.1', '.harness-bridge-installed.json'),
    });
    expect(cliPaths({ package: 'plain-cli', version: '2.0.0', bin: 'plain' }).dir).toBe(join(cache, 'plain-cli-2.0.0'));
  });

  it('a reference pin, by name or as a spec, keeps the cache dir it always had', () => {
    for (const [name, spec] of Object.entries(CLIS)) {
      expect(cliPaths({ package: spec.pkg, version: spec.version, bin: spec.bin })).toEqual(cliPaths(name as keyof typeof CLIS));
      expect(cliPaths(name as keyof typeof CLIS).dir).toBe(join(cache, `${name}-${spec.version}`));
    }
  });

  it('refuses a spec npm would read as an option, or whose paths would leave the cache', async () => {
    expect(() => cliPaths({ package: '--global', version: '1.0.0', bin: 'x' })).toThrow(/package "--global" is not an npm package name/);
    expect(() => cliPaths({ package: 'ok', version: '-1', bin: 'x' })).toThrow(/version "-1" is not a version/);
    expect(() => cliPaths({ package: 'ok', version: '1.0.0 && rm -rf /', bin: 'x' })).toThrow(/is not a version/);
    expect(() => cliPaths({ package: 'ok', version: '1.0.0', bin: '../../bin/sh' })).toThrow(/bin "..\/..\/bin\/sh" is not an executable name/);
    expect(() => cliPaths({ package: '../up', version: '1.0.0', bin: 'x' })).toThrow(/not an npm package name/);
    await expect(ensureCli({ package: 'ok', version: '', bin: 'x' })).rejects.toThrow(/is not a version/);
    expect(() => cliPaths('nope' as never)).toThrow(/unknown CLI "nope"; expected one of claude-code, codex, pi, claude-code-acp, codex-acp, qwen-code, gemini-cli, or a \{ package, version, bin \} spec/);
  });

  it('the reference adapters and the ACP presets declare exactly the pinned CLIs', () => {
    const declared = { 'claude-code': claudeCodeAdapter().cli, codex: codexAdapter().cli, pi: piAdapter().cli, 'claude-code-acp': claudeCodeAcpAdapter().cli, 'codex-acp': codexAcpAdapter().cli, 'qwen-code': qwenCodeAdapter().cli, 'gemini-cli': geminiCliAdapter().cli };
    for (const [name, spec] of Object.entries(CLIS)) {
      expect(declared[name as keyof typeof declared], name).toEqual({ package: spec.pkg, version: spec.version, bin: spec.bin });
    }
  });
});
