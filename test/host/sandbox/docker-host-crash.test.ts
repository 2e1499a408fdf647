// A host process that dies mid-turn (SIGKILL, nothing cleaned up) leaves no exec relay behind, in
// the container or on the host (issue 37 item 6): the relay reads its stdin to the end, and the end
// of the killed host's pipe ends the `docker exec` client's stdin, the relay's, and so the relay.
// The bridge itself stays, by design: the next host resumes on it (docs/remote-providers.md).
// Counted, not timed: a bounded number of looks for the relays to go.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docker, dockerOk } from '../../../host/sandbox/docker/docker-cli.ts';
import { dockerUnavailable } from '../../../host/sandbox/docker/provider.ts';
import { repoRoot } from '../../bridge/helpers.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker host-crash test: ${unavailable}`);
const prefix = `hbc${process.pid}`;

afterAll(async () => {
  if (unavailable) return;
  const ids = (await docker('docker', ['ps', '-aq', '--filter', `name=^${prefix}-`])).stdout.toString().split('\n').filter(Boolean);
  if (ids.length > 0) await docker('docker', ['rm', '-f', ...ids]);
});

/** Command lines of the processes in the container (its /proc), one per line. */
async function containerProcesses(container: string): Promise<string[]> {
  const script = 'for p in /proc/[0-9]*; do c=$(tr "\\0" " " < "$p/cmdline" 2>/dev/null) && [ -n "$c" ] && echo "$c"; done; true';
  return (await dockerOk('docker', ['exec', container, '/bin/sh', '-c', script])).split('\n').filter(Boolean);
}

/** Host processes that are docker clients of `container` (their command lines). */
async function hostClients(container: string): Promise<string[]> {
  const { readdirSync, readFileSync } = await import('node:fs');
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.includes(container) && argv.some((arg) => arg === 'docker' || arg.endsWith('/docker'))) lines.push(argv.join(' '));
    } catch {
      // gone meanwhile
    }
  }
  return lines;
}

describe.skipIf(unavailable !== undefined)('a Docker session whose host dies mid-turn', () => {
  it('leaves no relay: none in the container, no docker client of one on the host; the bridge runs on', { timeout: 180_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test/host/sandbox/docker-host-crash-child.ts'), prefix, 'crash'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let container = '';
    let deltas = 0;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const crashed = new Promise<void>((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const event = JSON.parse(buffer.slice(0, newline)) as { container?: string; delta?: string };
          buffer = buffer.slice(newline + 1);
          if (event.container) container = event.container;
          if (event.delta !== undefined && ++deltas === 5) child.kill('SIGKILL');
        }
      });
      child.once('exit', () => (deltas >= 5 ? resolve() : reject(new Error(`the host exited before the crash point\n${stderr}`))));
    });
    await crashed;
    expect(container).not.toBe('');
    const relays = async () => ({
      inside: (await containerProcesses(container)).filter((line) => line.includes('--relay')),
      host: (await hostClients(container)).filter((line) => line.includes('--relay')),
    });
    let left = await relays();
    for (let look = 0; look < 100 && left.inside.length + left.host.length > 0; look++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await relays();
    }
    const inside = await containerProcesses(container);
    console.log(`[figures] docker host-crash deltas-before-kill=${deltas} relays-left-inside=${left.inside.length} relay-clients-left-on-host=${left.host.length} bridge-running=${inside.some((line) => line.includes('--state-dir'))}`);
    expect(left, 'relay processes after the host died').toEqual({ inside: [], host: [] });
    expect(inside.some((line) => line.includes('bridge.mjs') && line.includes('--state-dir')), 'the bridge outlives the host, for the next one to resume').toBe(true);
  });
});
