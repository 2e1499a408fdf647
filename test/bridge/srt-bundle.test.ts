// sandbox-runtime bundled for the jail helper (bridge/jail/srt-bundle.ts, built by esbuild.config.mjs into
// dist/jail-srt.txt, shipped in the recipe beside the bridge): a real helper beside the bundle loads it, and
// wraps a command into the same bubblewrap command line as a helper that imports the installed srt; a bundle
// of another srt version, or one that does not load, leaves the helper on the installed srt, saying why.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_JAIL_SRT } from '../../bootstrap/bridge-command.mjs';
import { bridgeRecipe } from '../../bootstrap/recipe.ts';
import { JailHelper } from '../../bridge/jail/jail-helper.ts';
import { findSrt } from '../../bridge/jail/srt-path.ts';
import { SRT_BUNDLE_FILE } from '../../bridge/jail/srt-bundle.ts';
import { bridgeBundle, tempDir } from './helpers.ts';

const srt = findSrt(undefined, bridgeBundle, createRequire);
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0 && !('error' in srt);
const bundle = readFileSync(join(bridgeBundle, '..', BRIDGE_JAIL_SRT), 'utf8');
const installedVersion = (JSON.parse(readFileSync(join('error' in srt ? '.' : srt.pkg, 'package.json'), 'utf8')) as { version: string }).version;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A bridge file in a dir of its own, with `jailSrt` beside it (none when undefined). */
function bridgeWith(jailSrt: string | undefined): string {
  const dir = tempDir('hb-srt-bundle-');
  dirs.push(dir);
  copyFileSync(bridgeBundle, join(dir, 'bridge.mjs'));
  if (jailSrt !== undefined) writeFileSync(join(dir, SRT_BUNDLE_FILE), jailSrt);
  return join(dir, 'bridge.mjs');
}

/** A helper from `bridgeFile` wraps `echo hi` for a project: where its srt came from, and the command line with srt's random names made stable. */
async function wrapWith(bridgeFile: string, project: string, credentials?: { uid: number; gid: number }): Promise<{ srt: JailHelper['srt']; command: string }> {
  if ('error' in srt) throw new Error(srt.error);
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
  const filesystem = { denyRead: [join(project, 'hidden')], allowRead: [], allowWrite: [project], denyWrite: [] };
  const helper = new JailHelper({ bridgeFile, srtIndex: join(srt.pkg, 'dist', 'index.js'), config: { network, filesystem }, ...(credentials ? { credentials } : {}) });
  try {
    const command = await helper.wrap('echo hi', filesystem, project);
    return { srt: helper.srt, command: command.replace(/claude-[a-z]+-[0-9A-Za-z]+/g, 'claude-NAME') };
  } finally {
    helper.close();
    await helper.exited;
  }
}

describe('the bundle', () => {
  it('names the srt it was built from, the one package.json pins, under the name the bridge looks for', () => {
    const pinned = (JSON.parse(readFileSync(join(bridgeBundle, '..', '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['@anthropic-ai/sandbox-runtime'];
    expect(bundle.slice(0, bundle.indexOf('\n'))).toBe(`harness-bridge jail-srt @anthropic-ai/sandbox-runtime@${pinned} Apache-2.0`);
    expect(SRT_BUNDLE_FILE).toBe(BRIDGE_JAIL_SRT);
  });

  it('goes beside the bridge in the recipe, and can be left out', async () => {
    const withBundle = await bridgeRecipe({ harnessId: 'fixture', bootstrapDir: '/b' });
    expect(withBundle.files.find((file) => file.path === `/b/${BRIDGE_JAIL_SRT}`)?.content).toBe(bundle);
    const without = await bridgeRecipe({ harnessId: 'fixture', bootstrapDir: '/b', jailSrtSource: null });
    expect(without.files.map((file) => file.path)).toEqual(['/b/bridge.mjs']);
  });
});

describe.skipIf(!canNamespace)('a jail helper beside the bundle', () => {
  it('loads it, and wraps into the same command line as one that imports the installed srt', async () => {
    const project = tempDir('hb-srt-bundle-project-');
    dirs.push(project);
    const bundled = await wrapWith(bridgeWith(bundle), project);
    const installed = await wrapWith(bridgeWith(undefined), project);
    expect(bundled.srt).toEqual({ from: 'bundle', ms: { start: expect.any(Number), load: expect.any(Number), initialize: expect.any(Number) } });
    expect(installed.srt).toMatchObject({ from: 'installed' });
    expect(installed.srt).not.toHaveProperty('note');
    expect(bundled.command).toContain('bwrap');
    expect(bundled.command).toBe(installed.command);
  });

  it('of another srt version: imports the installed srt and says which versions', async () => {
    const project = tempDir('hb-srt-bundle-project-');
    dirs.push(project);
    const other = bundle.replace(`sandbox-runtime@${installedVersion} `, 'sandbox-runtime@0.0.1 ');
    const { srt: from } = await wrapWith(bridgeWith(other), project);
    expect(from).toMatchObject({ from: 'installed', note: expect.stringMatching(new RegExp(`holds sandbox-runtime 0\\.0\\.1; ${installedVersion.replace(/\./g, '\\.')} is installed`)) });
  });

  it("that the helper's uid cannot read: imports the installed srt and says so", async () => {
    const project = tempDir('hb-srt-bundle-project-');
    dirs.push(project);
    const bridgeFile = bridgeWith(bundle);
    chmodSync(join(bridgeFile, '..', SRT_BUNDLE_FILE), 0o600); // root's own, as the bridge's files are
    const { srt: from, command } = await wrapWith(bridgeFile, project, { uid: 65534, gid: 65534 });
    expect(from).toMatchObject({ from: 'installed', note: expect.stringMatching(/is unreadable \(EACCES/) });
    expect(command).toContain('bwrap');
  });

  it('that does not load (cut short): imports the installed srt and says why', async () => {
    const project = tempDir('hb-srt-bundle-project-');
    dirs.push(project);
    const { srt: from, command } = await wrapWith(bridgeWith(bundle.slice(0, Math.floor(bundle.length / 2))), project);
    expect(from).toMatchObject({ from: 'installed', note: expect.stringContaining('did not load') });
    expect(command).toContain('bwrap');
  });
});
