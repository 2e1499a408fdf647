// The part conformance cases (host/testing/conformance/part-cases.ts) on the real Claude Code 2.1.328 against
// the scripted model server: its own shell and write calls with results and file-change, steps and usage,
// a model error, reasoning, a denial's reply and a host tool's result, each checked against what the scripted
// model made the CLI do. Nothing is declared not applicable for Claude Code.
import { describe, it } from 'vitest';
import { claudeCodeAdapter } from '../../host/adapters/claude-code/claude-code.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { adapterPartConformance, type AdapterPartContext } from '../../host/testing/conformance/part-cases.ts';
import { runConformanceCase, useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'claude-code-parts',
  install: () => ensureCli('claude-code'),
  adapter: (bin, modelUrl, variant) => withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/messages',
});

const hostTools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];

describe('part conformance: claude-code (real CLI)', () => {
  for (const testCase of adapterPartConformance) {
    it(
      testCase.name,
      async (context) => {
        await runConformanceCase(
          (ctx: AdapterPartContext) => testCase.run(ctx),
          (defer, deferStop) => ({
            ...env.conformance(
              {
                text: 'SCENARIO:text conformance',
                long: 'SCENARIO:slow CHUNKS:30 INTERVAL:60 conformance slices',
                minParts: 30,
                hostTool: { prompt: 'SCENARIO:mcp call the host tool', tools: hostTools, output: 'HOST SAYS HI' },
                approval: { prompt: 'SCENARIO:shell', permissionMode: 'allow-reads' },
              },
              defer,
              deferStop,
            ),
            partPrompts: { shell: 'SCENARIO:shell', write: { prompt: 'SCENARIO:write PATH:new-file.txt', path: 'new-file.txt' }, modelError: 'SCENARIO:fail', reasoning: 'SCENARIO:think' },
          }),
          context,
        );
      },
      180_000,
    );
  }
});
