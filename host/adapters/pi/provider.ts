// pi's model provider as a launch option: pi reads providers from its config, and the adapter's extension
// (extension.ts) registers the one given here, so pi reaches a model endpoint without a config file.
import type { JSONValue } from '@ai-sdk/provider';

/** A pi model provider (pi's ProviderConfig plus its id), registered by the extension; `${VAR}` in strings expands from the CLI's env. */
export type PiProvider = { readonly id: string } & Readonly<Record<string, JSONValue>>;

/** A provider for an OpenAI Chat Completions endpoint (what the scripted model server and most local servers speak). */
export function piChatCompletionsProvider(p: { id: string; baseUrl: string; apiKey: string; models: string[] }): PiProvider {
  const model = (modelId: string) => ({
    ...{ id: modelId, name: modelId, reasoning: false, input: ['text'], contextWindow: 128_000, maxTokens: 4096 },
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
  });
  return { id: p.id, baseUrl: p.baseUrl, apiKey: p.apiKey, api: 'openai-completions', models: p.models.map(model) };
}
