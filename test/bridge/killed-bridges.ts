// For tests that start bridges on one state dir and kill them around a CLI: every bridge, host
// client and process group a test starts is stopped after it, and the next bridge attaches where
// the test says.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { keeperSocketPath } from '../../bridge/survive/keeper.ts';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { connectClient, startBridge, type RunningBridge, type TestClient } from './helpers.ts';

export type KilledBridges = {
  /** Process groups (a CLI's, a keeper's) SIGKILLed after the test. */
  groups: number[];
  /** A bridge on `stateDir` (a new one if undefined) with a host attached at `cursor` (its hello's lastSeq if undefined). */
  bridgeOn(stateDir?: string, cursor?: number): Promise<{ bridge: RunningBridge; client: TestClient }>;
};

/** Call at a test file's top level: registers the afterEach that stops what the tests started. */
export function killedBridges(): KilledBridges {
  const bridges: RunningBridge[] = [];
  const clients: TestClient[] = [];
  const groups: number[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
    for (const pid of groups.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  return {
    groups,
    async bridgeOn(stateDir, cursor) {
      const bridge = await startBridge(stateDir === undefined ? {} : { stateDir });
      bridges.push(bridge);
      const { client, hello } = await connectClient(bridge);
      clients.push(client);
      await client.attach(cursor ?? hello.lastSeq);
      return { bridge, client };
    },
  };
}

/** The pids of the keepers in a state dir (launch `survive`). */
export function keeperPids(stateDir: string): number[] {
  const root = join(stateDir, 'keepers');
  return existsSync(root) ? readdirSync(root).map((name) => Number(readFileSync(join(root, name, 'keeper.pid'), 'utf8'))) : [];
}

/** A connection to a keeper's socket, as a bridge makes one (bridge/survive/keeper.ts). */
export async function keeperConnection(dir: string): Promise<Socket> {
  const reachable = keeperSocketPath(dir);
  if ('error' in reachable) throw new Error(reachable.error);
  const socket = connect(reachable.path);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  } finally {
    reachable.release();
  }
  return socket;
}

/** The texts of a kind of record, in journal order. */
export const texts = (records: JournalRecord[], kind: 'stdin' | 'stdout') =>
  records.filter((r): r is Extract<JournalRecord, { kind: typeof kind }> => r.kind === kind).map((r) => r.data.text);
