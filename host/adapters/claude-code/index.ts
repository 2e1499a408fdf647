// harness-bridge/adapters/claude-code: the Claude Code reference adapter.
export { claudeCodeAdapter, claudeCodeVersion, type ClaudeCodeOptions, type ClaudeCodeState } from './claude-code.ts';
export { claudeCodeBuiltinTools, type ClaudeCodeBuiltinTool } from './tools.ts';
