// harness-bridge/adapters/pi: the pi (--mode rpc) reference adapter.
export { piAdapter, piVersion, type PiOptions, type PiState } from './pi.ts';
export { piChatCompletionsProvider, type PiProvider } from './provider.ts';
export { piBuiltinTools, type PiBuiltinTool } from './tools.ts';
