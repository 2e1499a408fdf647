// Removing files from a sandbox through its process surface (the contract's
// SandboxSession has no delete): each file, then its directory when that is
// left empty. Used to take down the files of skills a turn no longer has.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';

export async function removeSandboxFiles(sandbox: SandboxSession, paths: ReadonlyArray<string>): Promise<void> {
  if (paths.length === 0) return;
  // Paths travel as environment values (HB_RM_0 …), never spliced into the command.
  const env: Record<string, string> = {};
  const steps = paths.map((path, i) => {
    env[`HB_RM_${i}`] = path;
    return `rm -f -- "$HB_RM_${i}"; rmdir -- "$(dirname -- "$HB_RM_${i}")" 2>/dev/null`;
  });
  const result = await sandbox.run({ command: `${steps.join('; ')}; true`, env });
  if (result.exitCode !== 0) throw new Error(`could not remove ${paths.length} file(s) from the sandbox: ${result.stderr.trim()}`);
}
