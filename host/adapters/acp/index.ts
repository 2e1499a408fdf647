// harness-bridge/adapters/acp: any Agent Client Protocol agent (docs/acp.md), and presets for the
// ACP agents the kit is tested on.
export { acpAdapter, acpResponder, type AcpAgentOptions, type AcpState } from './acp.ts';
export { acpBuiltinTools, acpToolName } from './tools.ts';
export { claudeCodeAcpAdapter, claudeCodeAcpCli, codexAcpAdapter, codexAcpCli, qwenCodeAdapter, qwenCodeCli, geminiCliAdapter, geminiCliCli, type AcpPresetOptions } from './agents.ts';
