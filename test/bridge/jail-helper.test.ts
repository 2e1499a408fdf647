// The jail helper (bridge/jail/jail-helper.ts, jail-helper-main.ts) leaving while a kept CLI it wrapped
// may run, with real sandbox-runtime and bubblewrap: srt's mount points (made in the project as the
// jail starts) stay while the kept CLI's keeper socket answers, and go with srt's clean-up once the
// bridge said that CLI ended.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JailHelper } from '../../bridge/jail/jail-helper.ts';
import { findSrt } from '../../bridge/jail/srt.ts';
import { bridgeBundle, tempDir } from './helpers.ts';

const srt = findSrt(undefined, bridgeBundle);
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0 && !('error' in srt);

/** Wraps a command for a kept CLI in an empty project (its keeper socket listening), then lets the helper go; what is left in the project. */
async function leaveWithKeptCli(bridgeSaidItEnded: boolean): Promise<{ made: string[]; left: string[] }> {
  if ('error' in srt) throw new Error(srt.error);
  const project = tempDir('hb-helper-project-');
  const kept = join(tmpdir(), `hb-kept-${randomBytes(8).toString('hex')}.sock`);
  const keeper = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => keeper.listen(kept, resolve));
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
  const filesystem = { denyRead: [], allowRead: [], allowWrite: [project], denyWrite: [] };
  const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js'), config: { network, filesystem }, env: { ...process.env, TMPDIR: tmpdir() } });
  try {
    const wrapped = await helper.wrap('true', filesystem, project, kept);
    helper.started();
    const ran = spawnSync('/bin/sh', ['-c', wrapped], { cwd: project, encoding: 'utf8' }); // bubblewrap makes the mount points as it starts the jail
    expect(ran.status, ran.stderr).toBe(0);
    const made = readdirSync(project);
    if (bridgeSaidItEnded) helper.ended(kept);
    helper.close();
    await helper.exited;
    return { made, left: readdirSync(project) };
  } finally {
    await new Promise<void>((resolve) => keeper.close(() => resolve()));
    rmSync(kept, { force: true });
    rmSync(project, { recursive: true, force: true });
  }
}

describe.skipIf(!canNamespace)('the jail helper leaving with a kept CLI it wrapped', () => {
  it("leaves srt's mount points while that CLI's keeper socket answers", async () => {
    const { made, left } = await leaveWithKeptCli(false);
    expect(made.length).toBeGreaterThan(0); // .bashrc, .gitconfig, … made for bubblewrap
    expect(left).toEqual(made);
  });

  it('cleans them up once the bridge said that CLI ended', async () => {
    const { made, left } = await leaveWithKeptCli(true);
    expect(made.length).toBeGreaterThan(0);
    expect(left).toEqual([]);
  });
});
