// End to end: Zed's Claude Code ACP agent (@zed-industries/claude-code-acp, pinned in
// host/adapters/acp/agents.ts) through the generic ACP adapter, on the local sandbox provider,
// against the scripted model server's Anthropic flavour inside its loopback-only namespace
// (test/e2e/support.ts). The shared cases and the conformance list; what ACP cannot do is skipped
// by name with the reason (docs/acp.md#cases).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { claudeCodeAcpAdapter, claudeCodeAcpCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { textOf, useE2eEnv, type Part } from './support.ts';
import { controlLater } from '../host/session-helpers.ts';

const noMidTurn = 'ACP has no mid-turn user message: a turn is one session/prompt request, and the adapter offers no submitUserMessage';

const env = useE2eEnv({
  name: 'claude-code-acp',
  install: () => ensureCli(claudeCodeAcpCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(claudeCodeAcpAdapter({ binPath: bin, modelId: 'claude-opus-5-5', extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/messages',
  profiles: [fileURLToPath(new URL('./acp-profiles.ts', import.meta.url))],
});

// The agent offers MCP tools of its own (its `acp` server's Read, Write, Edit) beside the host's, in no fixed order.
const hostToolPrompt = 'SCENARIO:mcp TOOL:echo_upper call the host tool';

sharedE2eCases(env, {
  name: 'claude-code-acp',
  hostToolPrompt,
  deniedResult: 'User refused permission to run tool',
  compactionSummary: /Scripted summary/,
  translatorSnapshots: true,
  skip: {
    'mid-turn user message reaches the model within the running turn': noMidTurn,
    'mid-turn user message during a text-only turn: the answer to it is part of that turn; the next turn is normal': noMidTurn,
    'doCompact between turns from a re-attached host: the next turn carries the compaction part; the model gets the summary': 'ACP has no compaction request (doCompact is refused with HarnessCapabilityUnsupportedError)',
    'bridge SIGKILL mid-turn: replay rung, then the rerun rung re-drives the thread (marked recomputed) and finishes':
      "the agent keeps no resumable conversation for a session whose first turn was SIGKILLed mid-reply: the rerun's session/load fails ('Query closed before response'), its prompt gets 'No conversation found with session ID', and the rerun finishes error naming it",
  },
});

/** Every HARNESS_BRIDGE_MCP_TOKEN value in the env of a live process running the agent (we run as root: /proc is readable). */
async function liveMcpTokens(): Promise<string[]> {
  const tokens = new Set<string>();
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    const [cmdline, environ] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''), readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')]);
    if (!cmdline.includes('claude-code-acp')) continue;
    const token = environ.split('\0').find((entry) => entry.startsWith('HARNESS_BRIDGE_MCP_TOKEN='))?.slice('HARNESS_BRIDGE_MCP_TOKEN='.length);
    if (token) tokens.add(token);
  }
  return [...tokens];
}

async function findFile(dir: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === name) return path;
    if (entry.isDirectory()) {
      const found = await findFile(path, name);
      if (found) return found;
    }
  }
  return undefined;
}

describe('claude-code-acp only', () => {
  it('the MCP token reaches the agent as a stdin placeholder the bridge substitutes; the journal never holds its value', async () => {
    const { session } = await env.open('token');
    const parts: Part[] = [];
    const later = controlLater();
    const control = later.resolve(
      await session.doPromptTurn({
        prompt: hostToolPrompt,
        tools: [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }],
        emit: (part) => {
          parts.push(part);
          if (part.type === 'tool-call' && !part.providerExecuted) later.use((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'HOST: HELLO MCP' }));
        },
      }),
    );
    await control.done;
    expect(textOf(parts), 'the agent reached the MCP endpoint with the substituted token').toContain('HOST: HELLO MCP');
    const tokens = await liveMcpTokens();
    expect(tokens.length, 'the live agent has an MCP token in its env').toBeGreaterThan(0);
    const journal = await readFile((await findFile(join(env.sandboxRoot(), 'token'), 'journal.ndjson'))!, 'utf8');
    const leaked = tokens.filter((token) => journal.includes(token)).length;
    const placeholders = journal.split('${HARNESS_BRIDGE_MCP_TOKEN}').length - 1;
    console.log(`[figures] claude-code-acp MCP token: ${leaked} of ${tokens.length} live token value(s) in the journal (${journal.length} chars), ${placeholders} placeholder(s)`);
    expect(leaked).toBe(0);
    expect(placeholders).toBeGreaterThan(0);
    await session.doDestroy();
  });
});
