// harness-bridge/adapters/codex: the Codex (app-server) reference adapter.
export { codexAdapter, codexVersion, type CodexOptions, type CodexState } from './codex.ts';
export { codexBuiltinTools, type CodexBuiltinTool } from './tools.ts';
