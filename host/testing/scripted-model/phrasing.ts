// How CLIs phrase what they send, over a list of profiles (profiles.ts): which parts of a user
// message are the user's words, where the working directory is stated, and whether a request is
// the CLI's own compaction request. Every profile contributes; the lists are merged in order.
import { referenceProfiles, type CliProfile, type CompactionReply } from './profiles.ts';

type Phrasing = {
  readonly wrapperTags: ReadonlyArray<RegExp>;
  readonly notUserText: ReadonlyArray<string | RegExp>;
  readonly cwdPatterns: ReadonlyArray<RegExp>;
  readonly compaction: ReadonlyArray<NonNullable<CliProfile['compaction']>>;
};

/** Tried after every profile's own patterns: the two phrasings the reference CLIs use, which other CLIs copy. */
const genericCwdPatterns = [/[Ww]orking directory: ([^\s"\\<]+)/, /<cwd>([^<]+)<\/cwd>/];

const merged = new WeakMap<ReadonlyArray<CliProfile>, Phrasing>();

function phrasing(profiles: ReadonlyArray<CliProfile>): Phrasing {
  let found = merged.get(profiles);
  if (found) return found;
  const tags = new Set<string>();
  const notUserText: Array<string | RegExp> = [];
  const cwd: RegExp[] = [];
  const compaction: Array<NonNullable<CliProfile['compaction']>> = [];
  for (const profile of profiles) {
    for (const tag of profile.wrapperTags ?? []) tags.add(tag);
    notUserText.push(...(profile.notUserText ?? []));
    const patterns = profile.cwdPattern === undefined ? [] : Array.isArray(profile.cwdPattern) ? profile.cwdPattern : [profile.cwdPattern as RegExp];
    for (const pattern of patterns) if (!cwd.some((p) => p.source === pattern.source && p.flags === pattern.flags)) cwd.push(pattern);
    if (profile.compaction) compaction.push(profile.compaction);
  }
  for (const pattern of genericCwdPatterns) if (!cwd.some((p) => p.source === pattern.source && p.flags === pattern.flags)) cwd.push(pattern);
  found = {
    wrapperTags: [...tags].map((tag) => new RegExp(`<${escapeRegExp(tag)}>[\\s\\S]*?(</${escapeRegExp(tag)}>|$)`, 'g')),
    notUserText,
    cwdPatterns: cwd,
    compaction,
  };
  merged.set(profiles, found);
  return found;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The user's own words in a user text: the profiles' wrapper blocks stripped; '' when the text is the CLI's, not the user's. */
export function realUserText(text: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): string {
  const { wrapperTags, notUserText } = phrasing(profiles);
  let t = text;
  for (const tag of wrapperTags) t = t.replace(tag, '');
  t = t.trim();
  for (const rule of notUserText) if (typeof rule === 'string' ? t.startsWith(rule) : rule.test(t)) return '';
  return t;
}

/** The working directory the CLI announced to the model, if any. */
export function findCwd(raw: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): string | undefined {
  for (const pattern of phrasing(profiles).cwdPatterns) {
    const found = pattern.exec(raw)?.[1];
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first profile's answer to `lastUserText` if it is a CLI's compaction request. */
export function compactionReply(lastUserText: string, earlierUsers: number, profiles: ReadonlyArray<CliProfile> = referenceProfiles): CompactionReply | undefined {
  for (const handler of phrasing(profiles).compaction) {
    const reply = handler(lastUserText, { earlierUsers });
    if (reply) return reply;
  }
  return undefined;
}
