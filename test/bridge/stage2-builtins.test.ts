// Stage 2 sets a V8 flag as it starts (bridge/young-generation.ts), and V8 refuses Node's embedded code
// cache for every builtin compiled after a flag changed: the loader loads the builtins stage 2 requires
// first (esbuild.config.mjs, preloadBuiltins). Checked on the shipped bundle: a --require hook notes
// where Node's module load list stood at the first setFlagsFromString, and which modules came after it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const bridges: RunningBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

const hookSource = (report: string) => `
const v8 = require('node:v8');
const fs = require('node:fs');
const set = v8.setFlagsFromString;
let at = -1;
v8.setFlagsFromString = function (flags) {
  if (at < 0) at = process.moduleLoadList.length;
  return set.call(this, flags);
};
process.on('exit', () => fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify({ at, after: at < 0 ? [] : process.moduleLoadList.slice(at) })));
`;

describe('stage 2 and the builtins code cache', () => {
  it('every public builtin stage 2 requires is loaded before its V8 flag is set', { timeout: 60_000 }, async () => {
    const dir = tempDir('hb-stage2-builtins-');
    const hook = join(dir, 'hook.cjs');
    const report = join(dir, 'report.json');
    writeFileSync(hook, hookSource(report));
    const bridge = await startBridge({ wrap: (cmd, args) => ({ cmd, args: ['--require', hook, ...args] }) });
    bridges.push(bridge);
    const { client } = await connectClient(bridge); // its hello comes from stage 2's server: stage 2 has run
    await client.close();
    await bridge.kill('SIGTERM');
    const { at, after } = JSON.parse(readFileSync(report, 'utf8')) as { at: number; after: string[] };
    expect(at, 'stage 2 set its flag').toBeGreaterThan(0);
    // Node's own lazily loaded internals may follow; a public builtin compiled after the flag lost its code cache.
    expect(after.filter((entry) => entry.startsWith('NativeModule ') && !entry.startsWith('NativeModule internal/'))).toEqual([]);
  });
});
