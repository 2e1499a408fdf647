// skillFiles for CLIs that discover skills as directories of SKILL.md files
// (Claude Code's `.claude/skills`, pi's `.pi/skills`).
import { posix } from 'node:path';
import type { CliAdapterDefinition } from './adapter.ts';

/**
 * `<sessionWorkDir>/<dir>/<name>/SKILL.md` per skill: the name as a lowercase slug (at most 64 characters), the
 * description in the front matter, the skill's content as the body.
 */
export function skillDirectoryFiles(dir: string): NonNullable<CliAdapterDefinition<unknown>['skillFiles']> {
  return (skills, sessionWorkDir) =>
    skills.map((skill) => {
      const name = skill.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 64);
      const content = `---\nname: ${name}\ndescription: ${JSON.stringify(skill.description)}\n---\n\n${skill.content}\n`;
      return { path: posix.join(sessionWorkDir, dir, name, 'SKILL.md'), content };
    });
}
