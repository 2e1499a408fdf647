// The package's one error base: every family's class is a HarnessBridgeError
// and an AI SDK HarnessError (ours and the real @ai-sdk/harness one), each
// class's isInstance accepts only its own family, every code a class can carry
// is in the closed list (at type level and at run time), and errors from a
// second copy of the package are recognised through the Symbol.for markers.
import { AISDKError } from '@ai-sdk/provider';
import { HarnessError as SdkHarnessError } from '@ai-sdk/harness';
import { describe, expect, it } from 'vitest';
import { BootstrapError as BootstrapErrorFromBootstrap } from '../../bootstrap/index.ts';
import {
  BootstrapError,
  BridgeChannelError,
  BridgeSessionError,
  ChannelRequestError,
  HarnessBridgeError,
  HarnessCapabilityUnsupportedError,
  HarnessError,
  LocalSandboxError,
  ResumeStateError,
  bootstrapErrorCodes,
  channelErrorCodes,
  channelRequestErrorCodes,
  harnessBridgeErrorCodes,
  isHarnessBridgeErrorCode,
  localSandboxErrorCodes,
  sessionErrorCodes,
  type BootstrapErrorCode,
  type BridgeChannelErrorCode,
  type ChannelRequestErrorCode,
  type HarnessBridgeErrorCode,
  type HarnessBridgeErrorFamily,
  type LocalSandboxErrorCode,
  type SessionErrorCode,
} from '../../host/index.ts';
import { errorCodeSchema, type ErrorCode } from '../../protocol/v1/error-codes.ts';

// ---- type level: the classes' code types are exactly their family's list ----
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type Code<T> = T extends { readonly code: infer C } ? C : never;

export type TypeChecks = [
  Assert<Equal<Code<BridgeChannelError>, (typeof channelErrorCodes)[number]>>,
  Assert<Equal<Code<ChannelRequestError>, (typeof channelRequestErrorCodes)[number]>>,
  Assert<Equal<Code<BridgeSessionError>, (typeof sessionErrorCodes)[number]>>,
  Assert<Equal<Code<ResumeStateError>, (typeof sessionErrorCodes)[number]>>,
  Assert<Equal<Code<LocalSandboxError>, (typeof localSandboxErrorCodes)[number]>>,
  Assert<Equal<Code<BootstrapError>, (typeof bootstrapErrorCodes)[number]>>,
  // The exported code types are the same lists.
  Assert<Equal<BridgeChannelErrorCode, (typeof channelErrorCodes)[number]>>,
  Assert<Equal<ChannelRequestErrorCode, (typeof channelRequestErrorCodes)[number]>>,
  Assert<Equal<SessionErrorCode, (typeof sessionErrorCodes)[number]>>,
  Assert<Equal<LocalSandboxErrorCode, (typeof localSandboxErrorCodes)[number]>>,
  Assert<Equal<BootstrapErrorCode, (typeof bootstrapErrorCodes)[number]>>,
  // Every wire code is a channel-request code.
  Assert<ErrorCode extends ChannelRequestErrorCode ? true : false>,
  // The union is every family's codes and nothing else.
  Assert<
    Equal<HarnessBridgeErrorCode, BridgeChannelErrorCode | ChannelRequestErrorCode | SessionErrorCode | LocalSandboxErrorCode | BootstrapErrorCode>
  >,
  // Any class's code is a HarnessBridgeErrorCode; the base's code is exactly the union.
  Assert<Code<BridgeChannelError | ChannelRequestError | BridgeSessionError | LocalSandboxError | BootstrapError> extends HarnessBridgeErrorCode ? true : false>,
  Assert<Equal<Code<HarnessBridgeError>, HarnessBridgeErrorCode>>,
];

// A code outside the list does not type-check.
// @ts-expect-error 'no-such-code' is not a BridgeChannelErrorCode
void (() => new BridgeChannelError('no-such-code', 'x', { lastCursor: 0 }));
// @ts-expect-error a session code is not a bootstrap code
void (() => new BootstrapError('session-closed', 'x'));

// ---- one instance per family (and per code) ----
type Family = { name: string; family: HarnessBridgeErrorFamily; isInstance: (error: unknown) => boolean; make: (code: string) => HarnessBridgeError };

const families: Family[] = [
  {
    name: 'BridgeChannelError',
    family: 'channel',
    isInstance: (e) => BridgeChannelError.isInstance(e),
    make: (code) => new BridgeChannelError(code as BridgeChannelErrorCode, 'channel ended', { lastCursor: 7, firstSeq: 1, lastSeq: 9 }),
  },
  {
    name: 'ChannelRequestError',
    family: 'channel-request',
    isInstance: (e) => ChannelRequestError.isInstance(e),
    make: (code) => new ChannelRequestError(code as ChannelRequestErrorCode, 'request failed', { frameType: 'start', resent: true }),
  },
  {
    name: 'HarnessBridgeSessionError',
    family: 'session',
    isInstance: (e) => BridgeSessionError.isInstance(e),
    make: (code) => new BridgeSessionError(code as SessionErrorCode, 'session failed', new Error('under')),
  },
  {
    name: 'LocalSandboxError',
    family: 'local-sandbox',
    isInstance: (e) => LocalSandboxError.isInstance(e),
    make: (code) => new LocalSandboxError(code as LocalSandboxErrorCode, 'sandbox failed'),
  },
  {
    name: 'BootstrapError',
    family: 'bootstrap',
    isInstance: (e) => BootstrapError.isInstance(e),
    make: (code) => new BootstrapError(code as BootstrapErrorCode, 'bootstrap failed', { command: 'true', commandIndex: 0, exitCode: 1, stderrTail: 'tail' }),
  },
];

function firstCode(family: HarnessBridgeErrorFamily): string {
  return harnessBridgeErrorCodes[family][0]!;
}

describe('the closed list of error codes', () => {
  it('lists every family, each non-empty, kebab-case and without duplicates', () => {
    expect(Object.keys(harnessBridgeErrorCodes).sort()).toEqual(['bootstrap', 'channel', 'channel-request', 'local-sandbox', 'session']);
    for (const [family, codes] of Object.entries(harnessBridgeErrorCodes)) {
      expect(codes.length, family).toBeGreaterThan(0);
      expect(new Set(codes).size, `${family} has no duplicate`).toBe(codes.length);
      for (const code of codes) expect(code, family).toMatch(/^[a-z]+(-[a-z]+)*$/);
    }
  });

  it('includes every wire ErrorCode among the channel-request codes, plus the host-side ones', () => {
    for (const code of errorCodeSchema.options) expect(channelRequestErrorCodes).toContain(code);
    expect(channelRequestErrorCodes).toEqual([...errorCodeSchema.options, 'outcome-unknown', 'closed']);
  });

  it('isHarnessBridgeErrorCode accepts exactly the listed codes', () => {
    for (const codes of Object.values(harnessBridgeErrorCodes)) for (const code of codes) expect(isHarnessBridgeErrorCode(code)).toBe(true);
    for (const other of ['no-such-code', '', 42, null, undefined, 'ENOENT']) expect(isHarnessBridgeErrorCode(other)).toBe(false);
  });

  it('every family class carries each of its codes, and only listed codes', () => {
    for (const { family, make, isInstance } of families) {
      for (const code of harnessBridgeErrorCodes[family]) {
        const error = make(code);
        expect(error.code).toBe(code);
        expect(isHarnessBridgeErrorCode(error.code)).toBe(true);
        expect(isInstance(error)).toBe(true);
      }
    }
    const resume = new ResumeStateError('corrupt');
    expect(sessionErrorCodes).toContain(resume.code);
  });
});

describe('HarnessBridgeError', () => {
  const instances = [...families.map((f) => ({ ...f, error: f.make(firstCode(f.family)) }))];

  it('every family is a HarnessBridgeError, our HarnessError, the real SDK HarnessError and an AISDKError', () => {
    for (const { name, error } of [...instances, { name: 'HarnessBridgeSessionError', error: new ResumeStateError('corrupt') }]) {
      expect(HarnessBridgeError.isInstance(error), name).toBe(true);
      expect(HarnessError.isInstance(error), name).toBe(true);
      expect(SdkHarnessError.isInstance(error), `${name}: @ai-sdk/harness recognises it`).toBe(true);
      expect(AISDKError.isInstance(error), name).toBe(true);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(HarnessCapabilityUnsupportedError.isInstance(error), name).toBe(false);
    }
  });

  it('each class isInstance accepts its own family and rejects the others', () => {
    for (const self of instances) {
      for (const other of instances) expect(self.isInstance(other.error), `${self.name}.isInstance(${other.name})`).toBe(self === other);
    }
  });

  it('ResumeStateError is a BridgeSessionError with code bad-resume-state; a plain BridgeSessionError is not a ResumeStateError', () => {
    const resume = new ResumeStateError('foreign');
    expect(resume.code).toBe('bad-resume-state');
    expect(BridgeSessionError.isInstance(resume)).toBe(true);
    expect(ResumeStateError.isInstance(resume)).toBe(true);
    expect(ResumeStateError.isInstance(new BridgeSessionError('bad-resume-state', 'x'))).toBe(false);
    for (const { error } of instances) expect(ResumeStateError.isInstance(error)).toBe(false);
  });

  it('rejects other errors: plain Errors, the SDK HarnessError, non-objects', () => {
    const foreign = [
      new Error('x'),
      Object.assign(new Error('x'), { code: 'closed' }),
      new HarnessError({ message: 'x' }),
      new SdkHarnessError({ message: 'x' }),
      new HarnessCapabilityUnsupportedError({ message: 'x' }),
      null,
      undefined,
      'BridgeChannelError',
      { code: 'closed', name: 'BridgeChannelError' },
    ];
    for (const value of foreign) {
      expect(HarnessBridgeError.isInstance(value)).toBe(false);
      for (const { name, isInstance } of families) expect(isInstance(value), name).toBe(false);
    }
  });

  it('keeps the families\' extra fields, and cause', () => {
    const channel = new BridgeChannelError('cursor-expired', 'old', { lastCursor: 3, firstSeq: 10, lastSeq: 20, cause: 'why' });
    expect(channel).toMatchObject({ code: 'cursor-expired', message: 'old', lastCursor: 3, firstSeq: 10, lastSeq: 20, cause: 'why' });
    const request = new ChannelRequestError('outcome-unknown', 'dropped', { frameType: 'input' });
    expect(request).toMatchObject({ code: 'outcome-unknown', frameType: 'input', resent: false });
    const bootstrap = new BootstrapError('command-failed', 'exit 2', { command: 'make', commandIndex: 1, exitCode: 2, stderrTail: 'err' });
    expect(bootstrap).toMatchObject({ command: 'make', commandIndex: 1, exitCode: 2, stderrTail: 'err' });
    expect(new BootstrapError('lock-timeout', 'slow').exitCode).toBeUndefined();
    expect(new LocalSandboxError('bwrap-missing', 'no bwrap', { cause: 'c' }).cause).toBe('c');
  });

  it('bootstrap/index.ts exports the same BootstrapError as host/index.ts', () => {
    expect(BootstrapErrorFromBootstrap).toBe(BootstrapError);
  });

  it('markers are registry symbols, ours not enumerable; JSON keeps the code', () => {
    const error = new LocalSandboxError('template-busy', 'busy');
    const own = Object.getOwnPropertySymbols(error).map((s) => Symbol.keyFor(s));
    expect(own).toEqual(expect.arrayContaining(['harness-bridge.error', 'harness-bridge.error.LocalSandboxError', 'vercel.ai.error.AI_HarnessError']));
    // Ours are not enumerable (AISDKError sets its own 'vercel.ai.error' marker as a plain property).
    for (const key of ['harness-bridge.error', 'harness-bridge.error.LocalSandboxError']) {
      expect(Object.getOwnPropertyDescriptor(error, Symbol.for(key))?.enumerable, key).toBe(false);
    }
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ code: 'template-busy' });
  });
});

describe('errors from a second copy of the package', () => {
  it('a plain object carrying the Symbol.for markers is recognised, by family', () => {
    const copy = (className: string): object => ({
      [Symbol.for('harness-bridge.error')]: true,
      [Symbol.for(`harness-bridge.error.${className}`)]: true,
      [Symbol.for('vercel.ai.error.AI_HarnessError')]: true,
      code: 'closed',
    });
    for (const { name, isInstance } of families) {
      const className = name === 'HarnessBridgeSessionError' ? 'BridgeSessionError' : name;
      const error = copy(className);
      expect(HarnessBridgeError.isInstance(error), className).toBe(true);
      expect(SdkHarnessError.isInstance(error), className).toBe(true);
      expect(isInstance(error), className).toBe(true);
      for (const other of families) if (other.name !== name) expect(other.isInstance(error), `${other.name} vs ${className}`).toBe(false);
    }
    // A marker set to something other than true does not count.
    expect(BridgeChannelError.isInstance({ [Symbol.for('harness-bridge.error.BridgeChannelError')]: 'yes' })).toBe(false);
  });

  it('classes loaded as a separate module instance (no shared prototype) recognise each other', async () => {
    // `?copy` makes vitest load fresh module instances: distinct classes, as in a second bundle.
    const basePath = '../../protocol/errors/harness-bridge-error.ts?copy';
    const channelPath = '../../host/channel/errors.ts?copy';
    const baseCopy = (await import(/* @vite-ignore */ basePath)) as typeof import('../../protocol/errors/harness-bridge-error.ts');
    const channelCopy = (await import(/* @vite-ignore */ channelPath)) as typeof import('../../host/channel/errors.ts');
    expect(baseCopy.HarnessBridgeError).not.toBe(HarnessBridgeError);
    expect(channelCopy.BridgeChannelError).not.toBe(BridgeChannelError);

    const theirs = new channelCopy.BridgeChannelError('displaced', 'another host', { lastCursor: 5 });
    expect(theirs).not.toBeInstanceOf(BridgeChannelError);
    expect(BridgeChannelError.isInstance(theirs)).toBe(true);
    expect(HarnessBridgeError.isInstance(theirs)).toBe(true);
    expect(ChannelRequestError.isInstance(theirs)).toBe(false);
    expect(baseCopy.HarnessBridgeError.isInstance(theirs)).toBe(true);

    const ours = new BridgeChannelError('closed', 'closed', { lastCursor: 0 });
    expect(ours).not.toBeInstanceOf(channelCopy.BridgeChannelError);
    expect(channelCopy.BridgeChannelError.isInstance(ours)).toBe(true);
    expect(channelCopy.ChannelRequestError.isInstance(ours)).toBe(false);
    expect(baseCopy.HarnessBridgeError.isInstance(new BootstrapError('invalid-recipe', 'x'))).toBe(true);
  });
});
