// The real CLIs the Docker tests run (test/host/sandbox/docker-harness-agent.test.ts, its first-host child,
// test/e2e/docker-conformance.e2e.test.ts): each from the host's pinned install, bound read-only into a
// `--network none` container, its model (the scripted model on this host, named `localhost`) reached only
// through the egress tunnel's proxy on the container's 127.0.0.1 (docs/remote-providers.md#egress-tunnel).
import { realpathSync } from 'node:fs';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { codexAdapter } from '../../../host/adapters/codex/codex.ts';
import { withHostInstalledCli } from '../../../host/adapters/registry.ts';
import { ensureCli } from '../../../host/cli/install-clis.mjs';

/** The egress tunnel's port inside the container. */
export const proxyPort = 3128;
const proxy = `http://127.0.0.1:${proxyPort}`;
/** The model by name (the policy allows `localhost` only), through the container's proxy; the bridge's MCP endpoint (127.0.0.1 inside) directly. */
export const proxyEnv = { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' };

export type DockerCli = {
  readonly name: string;
  install(): Promise<{ dir: string; binPath: string }>;
  /** The executable the adapter runs, inside the bound install. */
  bin(install: { dir: string; binPath: string }): string;
  adapter(bin: string, modelUrl: string): ReturnType<typeof withHostInstalledCli>;
  /** The scripted model's route the CLI calls. */
  readonly modelPath: string;
  /** The modelId its stream-start names, when the adapter sets one. */
  readonly modelId?: string;
};

export const claudeCodeInDocker: DockerCli = {
  name: 'claude-code',
  install: () => ensureCli('claude-code'),
  bin: (install) => realpathSync(install.binPath),
  adapter: (bin, modelUrl) => withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test', ...proxyEnv } })),
  modelPath: '/v1/messages',
};

export const codexInDocker: DockerCli = {
  name: 'codex',
  install: () => ensureCli('codex'),
  // The static binary its npm wrapper (a node script) would exec.
  bin: (install) => `${install.dir}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex`,
  adapter: (bin, modelUrl) => withHostInstalledCli(codexAdapter({ binPath: bin, modelId: 'gpt-5.5', extraEnv: { OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_API_KEY: 'sk-test', ...proxyEnv } })),
  modelPath: '/v1/responses',
  modelId: 'gpt-5.5',
};

export const dockerClis: ReadonlyArray<DockerCli> = [claudeCodeInDocker, codexInDocker];
