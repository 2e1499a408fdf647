// Identity-keyed templates: the local equivalent of a provider snapshot. The
// first createSession for an identity builds a template dir by running
// onFirstCreate against a staging session, then renames it into place
// (atomic); every session with that identity starts as a copy. A lock dir
// (mkdir is atomic) makes onFirstCreate run once per identity across calls
// and processes; a lock whose owner process is gone is broken (two callers
// breaking one at once may both build: the later finds the template in place
// and uses it). A failed
// onFirstCreate leaves no template. Only the session dir is captured:
// anything onFirstCreate writes outside it is not part of the template.
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { errnoCode } from './errno.ts';
import { LocalSandboxError } from './errors.ts';
import { pidFileName, sanitizeId } from './paths.ts';
import { isAlive, processStartTime } from './pids.ts';
import type { LocalSandboxSession, LocalSessionOrigin } from './session.ts';

/** How long a second caller waits for another caller's onFirstCreate before giving up. */
export const maxTemplateWaitMs = 30 * 60_000;
/** Poll interval while another caller builds the template. */
const lockPollMs = 25;
/** A lock dir with no owner file yet is presumed live for this long (the owner writes it right after mkdir). */
const maxOwnerlessLockMs = 10_000;

const metaFileName = '.template-meta.json';

export type OnFirstCreate = (session: SandboxSession, opts: { abortSignal?: AbortSignal }) => Promise<void>;

interface TemplateMeta {
  identity: string;
  firstCreateMs: number;
  createdAt: string;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

async function readMeta(templateDir: string): Promise<TemplateMeta | undefined> {
  try {
    return JSON.parse(await readFile(join(templateDir, metaFileName), 'utf8')) as TemplateMeta;
  } catch (error) {
    // A template without readable meta is still a template; only the saved time is unknown.
    void error;
    return undefined;
  }
}

/** True when the lock's owner process is gone (or the lock never got an owner). */
async function lockIsStale(lockDir: string): Promise<boolean> {
  try {
    const owner = JSON.parse(await readFile(join(lockDir, 'owner.json'), 'utf8')) as { pid: number; startTime?: string };
    if (!isAlive(owner.pid)) return true;
    const now = processStartTime(owner.pid);
    return owner.startTime !== undefined && now !== undefined && now !== owner.startTime;
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
    const info = await stat(lockDir).catch(() => null);
    return info !== null && Date.now() - info.mtimeMs > maxOwnerlessLockMs;
  }
}

async function breakLock(lockDir: string): Promise<void> {
  // Rename first: of two breakers that judged the same lock stale, only one moves it. The other may then move a
  // lock made since, so two callers can build at once; the later rename into place then finds the template (buildTemplate).
  const aside = `${lockDir}.stale-${randomUUID()}`;
  try {
    await rename(lockDir, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

async function buildTemplate(options: {
  templateDir: string;
  identity: string;
  onFirstCreate: OnFirstCreate | undefined;
  makeSession: (dir: string) => Promise<LocalSandboxSession>;
  abortSignal: AbortSignal | undefined;
}): Promise<'built' | 'found'> {
  const staging = `${options.templateDir}.staging-${randomUUID()}`;
  await mkdir(staging, { recursive: true });
  const session = await options.makeSession(staging);
  try {
    const startedAt = performance.now();
    await options.onFirstCreate?.(session.restricted(), { abortSignal: options.abortSignal });
    const firstCreateMs = performance.now() - startedAt;
    await session.stop();
    const meta: TemplateMeta = { identity: options.identity, firstCreateMs, createdAt: new Date().toISOString() };
    await writeFile(join(staging, metaFileName), JSON.stringify(meta));
    await rm(join(staging, pidFileName), { force: true });
    try {
      await rename(staging, options.templateDir);
    } catch (error) {
      // Another caller's build landed first (a broken lock let two build): theirs is the template, ours is dropped.
      if (!['ENOTEMPTY', 'EEXIST'].includes(errnoCode(error) ?? '') || !(await exists(options.templateDir))) throw error;
      await rm(staging, { recursive: true, force: true });
      return 'found';
    }
    return 'built';
  } catch (error) {
    await session.stop();
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/** Makes sure the template for `identity` exists, building it at most once. */
async function ensureTemplate(options: {
  templatesRoot: string;
  identity: string;
  onFirstCreate: OnFirstCreate | undefined;
  makeSession: (dir: string) => Promise<LocalSandboxSession>;
  abortSignal: AbortSignal | undefined;
}): Promise<{ templateDir: string; built: boolean }> {
  const templateDir = join(options.templatesRoot, sanitizeId(options.identity));
  const lockDir = `${templateDir}.lock`;
  await mkdir(options.templatesRoot, { recursive: true });
  const deadline = Date.now() + maxTemplateWaitMs;
  for (;;) {
    options.abortSignal?.throwIfAborted();
    if (await exists(templateDir)) return { templateDir, built: false };
    let acquired = false;
    try {
      await mkdir(lockDir);
      acquired = true;
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    if (acquired) {
      try {
        await writeFile(join(lockDir, 'owner.json'), JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid) }));
        // Another caller may have finished between our check and our mkdir.
        if (await exists(templateDir)) return { templateDir, built: false };
        return { templateDir, built: (await buildTemplate({ ...options, templateDir })) === 'built' };
      } finally {
        await rm(lockDir, { recursive: true, force: true });
      }
    }
    if (await lockIsStale(lockDir)) {
      await breakLock(lockDir);
      continue;
    }
    if (Date.now() > deadline) {
      throw new LocalSandboxError('template-busy', `template ${basename(templateDir)} is still being built by another caller after ${maxTemplateWaitMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, lockPollMs));
  }
}

/** Fills `targetDir` (must not exist) from the identity's template, building the template first if needed. */
export async function startFromTemplate(options: {
  templatesRoot: string;
  identity: string;
  onFirstCreate: OnFirstCreate | undefined;
  targetDir: string;
  makeSession: (dir: string) => Promise<LocalSandboxSession>;
  abortSignal: AbortSignal | undefined;
}): Promise<LocalSessionOrigin> {
  const { templateDir, built } = await ensureTemplate(options);
  const startedAt = performance.now();
  await cp(templateDir, options.targetDir, {
    recursive: true,
    errorOnExist: true,
    force: false,
    verbatimSymlinks: true,
    filter: (source) => source !== join(templateDir, metaFileName),
  });
  const copyMs = performance.now() - startedAt;
  const meta = await readMeta(templateDir);
  return { identity: options.identity, fromTemplate: true, builtTemplate: built, copyMs, ...(meta ? { firstCreateMs: meta.firstCreateMs } : {}) };
}
