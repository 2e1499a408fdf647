// The part conformance cases (host/testing/conformance/part-cases.ts) on a real CLI against the scripted model
// server: its own shell and write calls with results and file-change, steps and usage, a model error, reasoning,
// a denial's reply and a host tool's result, each checked against what the scripted model made the CLI do. A case
// the CLI cannot run is declared in `notApplicable` with the reason and listed as skipped with it.
import { describe, it } from 'vitest';
import { adapterPartConformance, type AdapterPartContext } from '../../host/testing/conformance/part-cases.ts';
import { runConformanceCase, type E2eEnv } from './support.ts';

const hostTools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];

export function partConformanceE2eCases(
  env: E2eEnv,
  profile: { readonly name: string; readonly hostToolPrompt?: string; readonly notApplicable?: AdapterPartContext['notApplicable'] },
): void {
  describe(`part conformance: ${profile.name} (real CLI)`, () => {
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
                  hostTool: { prompt: profile.hostToolPrompt ?? 'SCENARIO:mcp call the host tool', tools: hostTools, output: 'HOST SAYS HI' },
                  approval: { prompt: 'SCENARIO:shell', permissionMode: 'allow-reads' },
                },
                defer,
                deferStop,
              ),
              partPrompts: { shell: 'SCENARIO:shell', write: { prompt: 'SCENARIO:write PATH:new-file.txt', path: 'new-file.txt' }, modelError: 'SCENARIO:fail', reasoning: 'SCENARIO:think' },
              ...(profile.notApplicable ? { notApplicable: profile.notApplicable } : {}),
            }),
            context,
            env.failedCase,
          );
        },
        180_000,
      );
    }
  });
}
