// `--profile` for the scripted model server's command lines (`harness-bridge model-server`,
// test/model-server/main.ts): a reference profile by name, or a module that exports profiles.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { claudeCodeProfile, codexProfile, piProfile, referenceProfiles, type CliProfile } from './profiles.ts';

const byName: Readonly<Record<string, ReadonlyArray<CliProfile>>> = {
  'claude-code': [claudeCodeProfile],
  codex: [codexProfile],
  pi: [piProfile],
  reference: referenceProfiles,
  // No profile: every tool and argument guessed from the offered schemas.
  generic: [],
};

export const profileNames = Object.keys(byName);

/**
 * The profiles one `--profile` value names: `claude-code`, `codex`, `pi`, `reference` (all three),
 * `generic` (none), or a path to an ES module whose default export (or `profiles` / `profile` export)
 * is a profile or an array of them. A path starts with `.` or `/`, or ends in .mjs/.js/.ts.
 */
export async function loadProfiles(value: string, cwd: string = process.cwd()): Promise<ReadonlyArray<CliProfile>> {
  const known = byName[value];
  if (known) return known;
  if (!/^[./]/.test(value) && !/\.(mjs|cjs|js|ts|mts)$/.test(value)) {
    throw new Error(`unknown profile ${JSON.stringify(value)}: expected ${profileNames.join(', ')} or a module path`);
  }
  const mod = (await import(pathToFileURL(resolve(cwd, value)).href)) as Record<string, unknown>;
  const found = mod.default ?? mod.profiles ?? mod.profile;
  const list = Array.isArray(found) ? found : [found];
  for (const [i, profile] of list.entries()) {
    if (typeof profile !== 'object' || profile === null || typeof (profile as { name?: unknown }).name !== 'string') {
      throw new Error(`${value}: export a profile ({ name, shellTool?, writeTool?, … }) or an array of them as default, \`profiles\` or \`profile\` (item ${i} is ${JSON.stringify(profile) ?? String(profile)})`);
    }
  }
  return list as CliProfile[];
}
