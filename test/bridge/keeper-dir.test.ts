// A state dir's keeper dirs removed once nothing will read them (bridge/survive/keeper-dir.ts): with
// the egress socket a SIGKILLed keeper could not remove, and nothing its spec names outside that pattern.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { removeStaleKeeperDirs } from '../../bridge/survive/keeper-dir.ts';
import { tempDir } from './helpers.ts';

function keeperDirWith(stateDir: string, id: string, socket: string): string {
  const dir = join(stateDir, 'keepers', id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'spec.json'), JSON.stringify({ argv: ['true'], stdin: 'null', exitDrainMs: 0, egress: { socket } }));
  writeFileSync(socket, ''); // stands for the socket file a SIGKILLed keeper left
  return dir;
}

describe('removeStaleKeeperDirs', () => {
  it("removes a gone keeper's dir and the egress socket its spec names", async () => {
    const stateDir = tempDir();
    const socket = join(tmpdir(), `hb-kept-${randomBytes(8).toString('hex')}.sock`);
    const dir = keeperDirWith(stateDir, 'a1', socket);
    expect(await removeStaleKeeperDirs(stateDir, undefined)).toEqual(['a1']);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(socket)).toBe(false);
  });

  it('leaves a path that is not a kept socket alone, and the adopted dir', async () => {
    const stateDir = tempDir();
    const other = join(stateDir, 'not-a-kept.sock');
    keeperDirWith(stateDir, 'b1', other);
    const kept = join(tmpdir(), `hb-kept-${randomBytes(8).toString('hex')}.sock`);
    const adopted = keeperDirWith(stateDir, 'b2', kept);
    expect(await removeStaleKeeperDirs(stateDir, 'b2')).toEqual(['b1']);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(adopted)).toBe(true);
    expect(existsSync(kept)).toBe(true);
    rmSync(kept, { force: true });
  });
});
