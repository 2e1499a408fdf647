// What the scripted model knows about the ACP agents (`--profile` module, loaded by the model
// server inside its namespace): the reference profiles, plus claude-code-acp's write and edit
// tools, which replace Claude's own Write/Edit when the client serves fs (docs/acp.md), and Gemini CLI.
import { claudeCodeProfile, geminiCliProfile, referenceProfiles, type CliProfile } from '../../host/testing/scripted-model/profiles.ts';

export const claudeCodeAcpProfile: CliProfile = {
  ...claudeCodeProfile,
  name: 'claude-code-acp',
  writeTool: { name: 'mcp__acp__Write', pathArg: 'file_path', contentArg: 'content', absolutePath: true },
  editTool: { name: 'mcp__acp__Edit', pathArg: 'file_path', oldArg: 'old_string', newArg: 'new_string', absolutePath: true },
};

export default [claudeCodeAcpProfile, geminiCliProfile, ...referenceProfiles];
