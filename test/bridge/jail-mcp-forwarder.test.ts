// The MCP forwarder inside the namespace (bridge/jail/srt.ts, innerScript): a CLI that ignores the proxy
// variables and connects to its MCP endpoint's 127.0.0.1 address the moment it starts finds it listening,
// because the jail's shell waits for the forwarder's listener before it execs the CLI. Real sandbox-runtime,
// bubblewrap, socat and the bridge's egress proxy; the CLI is bash opening /dev/tcp with no retry.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceSupport, type NamespaceSupport } from '../../bridge/jail/srt.ts';
import { createRequire } from 'node:module';
import { findSrt } from '../../bridge/jail/srt-path.ts';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import { bridgeBundle, tempDir } from './helpers.ts';

const srt = findSrt(undefined, bridgeBundle, createRequire);
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0 && !('error' in srt);
const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

describe.skipIf(!canNamespace)('the MCP forwarder inside the namespace', () => {
  let server: Server;
  let port: number;
  let stateDir: string;
  let project: string;
  let support: Extract<NamespaceSupport, { ok: true }>;
  beforeAll(async () => {
    server = createServer((_request, response) => response.end('mcp-endpoint-answered'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    stateDir = tempDir('hb-forwarder-state-');
    project = tempDir('hb-forwarder-project-');
    const found = await namespaceSupport({ user: undefined, srt: undefined, stateDir, bridgeFile: bridgeBundle, policyFile: undefined, log: quiet as never });
    if (!found.ok) throw new Error(found.reason);
    support = found;
  });
  afterAll(async () => {
    support?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  });

  /** One jailed spawn of a CLI that connects to 127.0.0.1:<the MCP port> as it starts (no proxy, no retry); what it read. */
  async function connectAtStart(): Promise<{ code: number | null; out: string; err: string }> {
    const script = `exec 3<>/dev/tcp/127.0.0.1/${port} || exit 7; printf 'GET /mcp HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`;
    const launch = { argv: ['/bin/bash', '-c', script], cwd: project, env: { [MCP_ENV_V1.urlEnvVar]: `http://127.0.0.1:${port}/mcp` }, io: { mode: 'pipes' } };
    const jailed = await support.wrap(launch as never, { areas: [project], project, user: undefined });
    if (!jailed.ok) throw new Error(jailed.message);
    try {
      const child = spawn(jailed.launch.argv[0]!, jailed.launch.argv.slice(1), { cwd: project, env: jailed.launch.env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      return { code, out, err };
    } finally {
      jailed.release?.();
    }
  }

  it('is listening before the CLI starts: five spawns connecting at once, five answers', async () => {
    const answered: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { code, out, err } = await connectAtStart();
      expect(code, `spawn ${i}: ${err}`).toBe(0);
      expect(out, `spawn ${i}`).toContain('mcp-endpoint-answered');
      answered.push(i);
    }
    expect(answered).toHaveLength(5);
  });
});
