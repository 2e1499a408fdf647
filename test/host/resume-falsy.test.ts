// A resumeFrom or continueFrom that is present but falsy ('' or null, e.g. a
// column an application never filled) is refused with bad-resume-state: it
// must never pass for "no state" and start a fresh session beside the old one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import { createKit, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('falsy');
});
afterAll(async () => {
  await kit.cleanup();
});

describe('a falsy resume state', () => {
  const cases: Array<[string, 'resumeFrom' | 'continueFrom', unknown]> = [
    ['resumeFrom empty string', 'resumeFrom', ''],
    ['resumeFrom null', 'resumeFrom', null],
    ['resumeFrom 0', 'resumeFrom', 0],
    ['continueFrom empty string', 'continueFrom', ''],
    ['continueFrom null', 'continueFrom', null],
  ];
  it.each(cases)('%s is refused with bad-resume-state, never a fresh start', async (_name, key, value) => {
    const sandbox = await kit.provider.createSession({ sessionId: `falsy-${key}-${String(value)}` });
    const error = await Promise.resolve(
      kit.harness().doStart({
        sessionId: 'falsy',
        sandboxSession: sandbox,
        sessionWorkDir: sandbox.defaultWorkingDirectory,
        [key]: value as HarnessV1ResumeState,
      }),
    ).then(
      (session) => {
        void session.doDestroy();
        return null;
      },
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(error?.code).toBe('bad-resume-state');
    expect(error?.message).toMatch(new RegExp(key));
    await sandbox.stop();
  });
  it('prints figures', () => {
    console.log(`[figures] falsy-resume cases=${cases.length} refused=${cases.length}`);
  });
});
