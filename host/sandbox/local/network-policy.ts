// setNetworkPolicy for the local sandbox (issue 21; docs/security.md#network-policy). The policy
// lives in the session dir, `.harness-bridge/network/policy.json` (0600 in a 0700 dir: the CLI
// never sees it, and a namespace hides the whole `.harness-bridge` dir), so it outlives this host
// process and every bridge started in the session later reads it at start. Bridges already running
// watch the file and acknowledge each revision in `bridges/<bridgeId>.json`; setNetworkPolicy
// resolves once every live bridge enforces the new revision, and rejects when one cannot (its CLI
// runs without a network namespace) or does not answer in time. Enforcement is the bridge's egress
// proxy (bridge/jail/egress-proxy.ts), for the CLI and everything it spawns.
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessV1NetworkPolicy } from '../../../protocol/harness-v1/index.ts';
import {
  NETWORK_POLICY_FILES,
  networkPolicyAckSchema,
  networkPolicySchema,
  type NetworkPolicy,
  type NetworkPolicyAck,
} from '../../../protocol/v1/network-policy.ts';
import { errnoCode } from './errno.ts';
import { LocalSandboxError } from './errors.ts';
import { isAlive, processStartTime } from './pids.ts';

/** A bridge that applies a policy takes one inotify event and a file write; 10 s means it is stuck. */
export const maxPolicyAckMs = 10_000;
const pollMs = 20;

/** The session's policy dir (inside the kit's `.harness-bridge` dir, which bridges find from their state dir). */
export function networkPolicyDir(sessionDir: string): string {
  return join(sessionDir, '.harness-bridge', 'network');
}

export function networkPolicyFile(sessionDir: string): string {
  return join(networkPolicyDir(sessionDir), NETWORK_POLICY_FILES.policy);
}

/** The policy in force for the session (allow-all when none was set). */
export async function readNetworkPolicy(sessionDir: string): Promise<NetworkPolicy> {
  try {
    const json = JSON.parse(await readFile(networkPolicyFile(sessionDir), 'utf8')) as { policy?: unknown };
    const parsed = networkPolicySchema.safeParse(json.policy);
    return parsed.success ? parsed.data : { mode: 'deny-all' };
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { mode: 'allow-all' };
    throw error;
  }
}

/** Writes the policy, then waits until every live bridge of the session enforces it. */
export async function writeNetworkPolicy(sessionDir: string, policy: HarnessV1NetworkPolicy, options: { maxWaitMs?: number } = {}): Promise<void> {
  const parsed = networkPolicySchema.safeParse(policy);
  if (!parsed.success) {
    throw new LocalSandboxError('invalid-option', `not a network policy: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'policy'}: ${i.message}`).join('; ')}`);
  }
  const dir = networkPolicyDir(sessionDir);
  // `.harness-bridge` passes a CLI of its own uid through to its dirs (0711); the policy dir is the host's alone.
  const kitDir = join(sessionDir, '.harness-bridge');
  if ((await stat(kitDir).catch(() => null)) === null) {
    await mkdir(kitDir, { recursive: true, mode: 0o711 });
    await chmod(kitDir, 0o711);
  }
  await mkdir(join(dir, NETWORK_POLICY_FILES.bridges), { recursive: true, mode: 0o700 });
  const revision = randomUUID();
  const file = networkPolicyFile(sessionDir);
  await writeFile(`${file}.tmp`, JSON.stringify({ format: 1, revision, policy: parsed.data }), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
  await awaitBridges(dir, revision, parsed.data, options.maxWaitMs ?? maxPolicyAckMs);
}

/** The live bridges' acknowledgements; dead bridges' files are removed. */
async function liveAcks(dir: string): Promise<Array<{ bridgeId: string; ack: NetworkPolicyAck }>> {
  const bridges = join(dir, NETWORK_POLICY_FILES.bridges);
  const names = (await readdir(bridges).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
  const out: Array<{ bridgeId: string; ack: NetworkPolicyAck }> = [];
  for (const name of names) {
    const path = join(bridges, name);
    let ack: NetworkPolicyAck;
    try {
      const parsed = networkPolicyAckSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
      if (!parsed.success) continue;
      ack = parsed.data;
    } catch {
      continue; // removed meanwhile
    }
    const alive = isAlive(ack.pid) && (ack.startTime === undefined || processStartTime(ack.pid) === ack.startTime);
    if (!alive) {
      await rm(path, { force: true });
      continue;
    }
    out.push({ bridgeId: name.slice(0, -5), ack });
  }
  return out;
}

async function awaitBridges(dir: string, revision: string, policy: NetworkPolicy, maxWaitMs: number): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const acks = await liveAcks(dir);
    const pending = acks.filter(({ ack }) => ack.revision !== revision);
    const unenforced = acks.filter(({ ack }) => ack.revision === revision && !ack.enforced);
    if (unenforced.length > 0 && policy.mode !== 'allow-all') {
      const { bridgeId, ack } = unenforced[0]!;
      throw new LocalSandboxError(
        'network-policy-unenforced',
        `the policy is written, but bridge ${bridgeId} (pid ${ack.pid}) runs its CLI with isolation ${ack.mode}, which has no network namespace: ` +
          'it refuses to start a CLI under this policy rather than run one unrestricted (docs/security.md#network-policy)',
      );
    }
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      throw new LocalSandboxError(
        'network-policy-timeout',
        `the policy is written, but ${pending.length} live bridge(s) did not apply it within ${maxWaitMs} ms (${pending.map((p) => p.bridgeId).join(', ')})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
