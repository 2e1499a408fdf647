// The relative links of a package's Markdown files, resolved inside one directory (the repo, or the
// package as npm installed it): each must name a file there, and a `#fragment` into a Markdown file
// must name an anchor of it (an `<a id>` or a heading, slugged as GitHub does). Links inside code
// blocks are not links.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

export type DocLink = { from: string; href: string; target: string };

const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, '');

/** GitHub's heading slug: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(m[1]!);
  const seen = new Map<string, number>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every relative link of `files` (paths relative to `root`), and those that do not resolve there, each with why. */
export function checkDocLinks(root: string, files: ReadonlyArray<string>): { links: DocLink[]; broken: string[] } {
  const links: DocLink[] = [];
  const broken: string[] = [];
  const anchors = new Map<string, Set<string>>();
  for (const from of files) {
    for (const m of withoutCode(readFileSync(join(root, from), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // http:, mailto:
      const [path = '', fragment] = href.split('#');
      const target = path === '' ? from : posix.normalize(posix.join(posix.dirname(from), path));
      links.push({ from, href, target });
      if (target.startsWith('../') || !existsSync(join(root, target))) {
        broken.push(`${from} links ${href}: no ${target}`);
        continue;
      }
      if (fragment === undefined || !target.endsWith('.md')) continue;
      if (!anchors.has(target)) anchors.set(target, anchorsOf(withoutCode(readFileSync(join(root, target), 'utf8'))));
      if (!anchors.get(target)!.has(fragment)) broken.push(`${from} links ${href}: ${target} has no anchor #${fragment}`);
    }
  }
  return { links, broken };
}
