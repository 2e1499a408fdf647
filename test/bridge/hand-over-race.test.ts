// The project hand-over race (docs/security.md#what-the-cli-may-write): a CLI of another session keeps
// swapping <project>/d with a symlink to a dir elsewhere while a root bridge hands the project to its
// CLI's uid. The walk must change owners inside the project only: it reaches each child through its
// parent's open fd with O_NOFOLLOW (cli-dirs.ts). A bounded count of hand-overs, each racing a swapper
// process; root only (chown needs it).
import { spawn } from 'node:child_process';
import { chownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handOver } from '../../bridge/jail/cli-dirs.ts';
import { tempDir } from './helpers.ts';

const asRoot = process.getuid?.() === 0;
const rounds = 400;
const agent = { name: 'race-test', uid: 54321, gid: 54321 };

/** Every path under `dir` (symlinks not followed) with its uid. */
function owners(dir: string, out = new Map<string, number>()): Map<string, number> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = lstatSync(path);
    out.set(path, info.uid);
    if (info.isDirectory()) owners(path, out);
  }
  return out;
}

function resetOwners(dir: string): void {
  chownSync(dir, 0, 0);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) continue;
      chownSync(path, 0, 0);
      if (info.isDirectory()) resetOwners(path);
    } catch {
      // swapped away
    }
  }
}

describe('the project hand-over under a symlink swap', () => {
  it.runIf(asRoot)(`${rounds} hand-overs racing a swapper: no owner changes outside the project`, { timeout: 120_000 }, async () => {
    const base = tempDir('hb-race-');
    const victim = join(base, 'victim');
    const project = join(base, 'project');
    mkdirSync(join(victim, 'sub'), { recursive: true });
    for (const name of ['token', 'bridge.json', 'sub/journal.ndjson']) writeFileSync(join(victim, name), 'secret', { mode: 0o600 });
    mkdirSync(join(project, 'd', 'e'), { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(join(project, 'd', `f${i}`), 'x');
    writeFileSync(join(project, 'd', 'e', 'g'), 'x');
    const before = owners(victim);
    // The attacker: d ⇄ a symlink to the victim dir, as fast as it can, until its stdin closes.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const [d, real, victim] = process.argv.slice(1); let n = 0, stop = false;
         process.stdin.on('end', () => (stop = true)).resume();
         const loop = () => { for (let i = 0; i < 200 && !stop; i++) { try { fs.renameSync(d, real); fs.symlinkSync(victim, d); fs.unlinkSync(d); fs.renameSync(real, d); n++; } catch {} }
           if (stop) { try { fs.unlinkSync(d); } catch {} try { fs.renameSync(real, d); } catch {} process.stdout.write(String(n)); } else setImmediate(loop); };
         process.stdout.write('r'); loop();`,
        join(project, 'd'),
        join(project, 'd.real'),
        victim,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let swaps = '';
    const running = new Promise<void>((resolve) =>
      swapper.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        if (swaps === '' && chunk.startsWith('r')) resolve();
        swaps += chunk;
      }),
    );
    const exited = new Promise<void>((resolve) => swapper.once('exit', () => resolve()));
    let changed = 0;
    await running;
    try {
      for (let round = 0; round < rounds; round++) {
        resetOwners(project);
        changed += handOver(project, agent, []).changed;
        // Give the swapper its turn between rounds (the walk itself is synchronous).
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      swapper.stdin!.end();
      await exited;
    }
    swaps = swaps.slice(1);
    const after = owners(victim);
    expect([...after.entries()].filter(([, uid]) => uid !== 0), `owners changed outside the project (seed-free; ${rounds} rounds, ${swaps} swaps)`).toEqual([]);
    expect(after.size).toBe(before.size);
    expect(Number(swaps), 'the swapper ran').toBeGreaterThan(0);
    expect(changed, 'the hand-overs changed owners in the project').toBeGreaterThan(rounds);
    console.log(`[figures] hand-over race: rounds=${rounds} swaps=${swaps} owners-changed-in-project=${changed} outside=0`);
  });
});
