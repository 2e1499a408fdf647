// `harness-bridge view` as a process: where the page goes by default, and one
// clear line and exit code for each kind of bad input (nothing written).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeBigJournal } from '../../fixtures/big-journal.ts';
import { runCli } from '../cli/cli-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'hb-view-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('harness-bridge view (process)', () => {
  it('writes <input name>.html in the current directory by default; a state dir is read through its journal', async () => {
    const state = join(dir, 'state');
    mkdirSync(state);
    const big = writeBigJournal(join(state, 'journal.ndjson'), 1);
    const run = await runCli(['view', '.'], { cwd: state });
    expect(run.code, run.stderr).toBe(0);
    const page = join(state, 'state.html');
    expect(run.stdout).toMatch(new RegExp(`^wrote ${page} \\([\\d,]+ bytes\\): open it in a browser\\n$`));
    const html = readFileSync(page, 'utf8');
    expect(html).toContain(`"records":${big.records},`);
    const named = await runCli(['view', join(state, 'journal.ndjson')], { cwd: dir });
    expect(named.code, named.stderr).toBe(0);
    expect(existsSync(join(dir, 'journal.html'))).toBe(true);
  });

  it('bad input: one line naming the problem, exit 1 (2 for usage), no page', async () => {
    writeFileSync(join(dir, 'garbage.txt'), 'garbage\n');
    const cases: Array<{ args: string[]; code: number; line: RegExp }> = [
      { args: ['view', join(dir, 'missing.ndjson'), '--out', join(dir, 'x.html')], code: 1, line: /^harness-bridge view: cannot read .*missing\.ndjson: ENOENT$/ },
      { args: ['view', join(dir, 'garbage.txt'), '--out', join(dir, 'x.html')], code: 1, line: /^harness-bridge view: .*garbage\.txt:1: not JSON and not a journal line/ },
      { args: ['view', join(dir, 'state'), '--adapter', 'nope', '--out', join(dir, 'x.html')], code: 2, line: /^harness-bridge view: unknown adapter "nope"; known: fixture, / },
      { args: ['view', join(dir, 'state'), '--port', '80'], code: 2, line: /^harness-bridge view: --port needs --serve$/ },
      { args: ['view'], code: 2, line: /^harness-bridge view: missing the recording, journal or state dir to view/ },
    ];
    for (const { args, code, line } of cases) {
      const run = await runCli(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(code);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr.trim()).toMatch(line);
    }
    expect(existsSync(join(dir, 'x.html'))).toBe(false);
  });
});
