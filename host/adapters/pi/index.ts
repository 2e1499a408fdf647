// harness-bridge/adapters/pi: the pi (--mode rpc) reference adapter.
export { piAdapter, piChatCompletionsProvider, piVersion, type PiOptions, type PiProvider, type PiState } from './pi.ts';
export { piBuiltinTools, type PiBuiltinTool } from './tools.ts';
