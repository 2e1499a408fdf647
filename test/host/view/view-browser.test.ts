// `harness-bridge view` as a user gets it and sees it: the package packed and
// installed in a fresh project, `npx harness-bridge view` run on recordings
// of REAL sessions (fixture CLI, local sandbox provider, every channel
// recorded): a turn suspended in one host instance and continued in another,
// the same recording with one record cut out (a gap), a turn whose bridge was
// killed and whose journal was lost (continued by a rerun in a new journal),
// and a diff of two sessions. Each page is opened from disk in Debian's
// chromium (headless, driven by playwright-core; one launch for the file) and
// clicked through: counts against the library's own reading of the source,
// the linked record ↔ part, the host call and its answer, the marked gap,
// the rerun rung, the differing rows; a screenshot is taken and must be a
// real image. The demo's printed `view` command is run as printed;
// HARNESS_BRIDGE_UPDATE_SCREENSHOT=1 writes that page's screenshot to
// docs/images/viewer.png (the README's picture).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState, HarnessV1Session } from '../../../protocol/harness-v1/session.ts';
import type { HarnessV1NetworkSandboxSession } from '../../../protocol/harness-v1/sandbox.ts';
import { createBridgeHarness } from '../../../host/harness.ts';
import { checkInvariants, loadSource, reconstruct, translateRecords } from '../../../host/replay/index.ts';
import { createLocalSandboxProvider } from '../../../host/sandbox/local/provider.ts';
import { writeBigJournal } from '../../fixtures/big-journal.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';
import { recordFixtureSession, waitUntil, type RecordedSession } from '../cli/cli-helpers.ts';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const chromiumPath = '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'hb-view-'));
chmodSync(work, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
const app = join(work, 'app');
const sessions: RecordedSession[] = [];
const sandboxes: HarnessV1NetworkSandboxSession[] = [];
let browser: BrowserContext;
let page: Page;
const files = { suspend: '', gap: '', rerun: '', other: '' };
let gapSeq = 0;

type Ran = { code: number | null; stdout: string; stderr: string };
function run(command: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
const ok = (ran: Ran, what: string): Ran => {
  if (ran.code !== 0) throw new Error(`${what} exited ${ran.code}: ${ran.stderr || ran.stdout}`);
  return ran;
};

/** A recording dir's files as one file (every segment in order). */
async function concatRecording(session: RecordedSession, name: string): Promise<string> {
  const names = readdirSync(session.recordDir).filter((file) => file.endsWith('.ndjson')).sort();
  let text = '';
  for (const file of names) text += await readFile(join(session.recordDir, file), 'utf8');
  const path = join(work, `${name}.ndjson`);
  writeFileSync(path, text);
  return path;
}

/** A fixture turn suspended mid-way whose bridge is then killed and its state dir (journal) deleted; continued by a new host instance: rung rerun, a new journal. */
async function recordCrashRerun(): Promise<string> {
  const root = join(work, 'crash');
  const recordDir = join(root, 'recordings');
  await mkdir(recordDir, { recursive: true });
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const open = async (state?: HarnessV1ResumeState): Promise<HarnessV1Session> => {
    const sandbox = state ? await provider.resumeSession({ sessionId: 'crash' }) : await provider.createSession({ sessionId: 'crash' });
    sandboxes.push(sandbox);
    const workDir = join(sandbox.defaultWorkingDirectory, 'work');
    await mkdir(workDir, { recursive: true });
    return createBridgeHarness(fixtureAdapter(), { recordDir, probeTimeoutMs: 1_500 }).doStart({ sessionId: 'crash', sandboxSession: sandbox, sessionWorkDir: workDir, ...(state ? { resumeFrom: state } : {}) });
  };
  const first = await open();
  let count = 0;
  let suspending: PromiseLike<HarnessV1ResumeState> | undefined;
  const control = await first.doPromptTurn({
    prompt: 'crash prompt LINES:30 INTERVAL:10',
    emit: () => {
      if (++count === 8 && !suspending) suspending = first.doSuspendTurn();
    },
  });
  await Promise.race([control.done, waitUntil(() => suspending !== undefined, 20_000)]);
  const state = await suspending!;
  const { stateDir } = state.data as { stateDir: string };
  const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
  process.kill(pid, 'SIGKILL');
  await waitUntil(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 5_000);
  await rm(stateDir, { recursive: true, force: true });
  const second = await open(state);
  const next = await second.doContinueTurn({ emit: () => {} });
  await next.done;
  await second.doStop();
  const names = readdirSync(recordDir).filter((file) => file.endsWith('.ndjson')).sort();
  const path = join(work, 'rerun.ndjson');
  writeFileSync(path, names.map((file) => readFileSync(join(recordDir, file), 'utf8')).join(''));
  return path;
}

/**
 * The suspend recording with the record `seq` cut out of every frame that carries it: a record the suspended host had
 * received last can be delivered again by the continuing host's replay, and cut from its first delivery only it would
 * leave no hole when it ends its segment (the replay fills it in).
 */
function cutRecord(from: string, seq: number, to: string): void {
  const carries = new RegExp(`"seq":${seq},`);
  const lines = readFileSync(from, 'utf8').split('\n').flatMap((line) => {
    if (!line.includes('"type":"records"') || !carries.test(line)) return [line];
    const value = JSON.parse(line) as { frame: { records: Array<{ seq: number }> } };
    value.frame.records = value.frame.records.filter((record) => record.seq !== seq);
    return value.frame.records.length > 0 ? [JSON.stringify(value)] : [];
  });
  writeFileSync(to, lines.join('\n'));
}

/** A second "version" of an adapter for the fixture CLI's output, as a plain module (no imports): its deltas upper-cased. */
const shoutingAdapter = `
const parse = (record) => {
  if (record.kind !== 'stdout' || record.data.cont || !record.data.text.startsWith('{')) return undefined;
  try { return JSON.parse(record.data.text); } catch { return undefined; }
};
function step(state, record) {
  const parts = [];
  if (state.done) return { state, parts };
  if (record.kind === 'turn-start') parts.push({ type: 'stream-start', modelId: 'fixture' });
  const line = parse(record);
  if (line?.type === 'delta') {
    if (!state.text) parts.push({ type: 'text-start', id: (state.text = 'text-' + record.seq) });
    parts.push({ type: 'text-delta', id: state.text, delta: line.text.toUpperCase() + '\\n' });
  } else if (line?.type === 'result' || record.kind === 'turn-end') {
    if (state.text) parts.push({ type: 'text-end', id: state.text });
    state.done = true;
  }
  return { state, parts };
}
export default {
  harnessId: 'shouting',
  builtinTools: {},
  launch: (ctx) => ({ argv: ['fixture-cli'], cwd: ctx.sessionWorkDir, env: {}, stdin: 'pipe', lifetime: 'session', turnEnd: [{ stream: 'stdout', prefix: '{"type":"result",' }] }),
  encodePrompt: ({ text }) => JSON.stringify({ type: 'prompt', text }) + '\\n',
  threadId: (record) => { const line = parse(record); return line?.type === 'session' ? line.id : undefined; },
  translator: { init: () => ({ text: null, done: false }), step },
};
`;

/** What the library reads from a source: the page must show the same. */
function expected(path: string) {
  const source = loadSource(path);
  const records = reconstruct(source).records;
  const parts = translateRecords(fixtureAdapter(), records).parts;
  return { source, records, parts, check: checkInvariants(source, fixtureAdapter()) };
}

async function view(args: string[], out: string): Promise<string> {
  const path = join(work, out);
  const ran = ok(await run('npx', ['--no-install', 'harness-bridge', 'view', ...args, '--out', path], app), `npx harness-bridge view ${args.join(' ')}`);
  expect(ran.stdout).toMatch(/^wrote .*\.html \([\d,]+ bytes\)/);
  return path;
}

async function openPage(path: string): Promise<void> {
  await page.goto(`file://${path}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
}
const count = async (name: string) => Number(((await page.locator(`[data-count="${name}"] b`).textContent()) ?? '').replace(/,/g, ''));
const errors: string[] = [];

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Debian's chromium is not installed (${chromiumPath} is missing): the viewer's browser test needs it. scripts/test-setup.sh installs it (scripts/ensure-apt.sh chromium; as root or with sudo)`);
  }
  mkdirSync(app);
  // The package as a user gets it (dist/ is built by the global setup; lib/ is not needed by the CLI).
  const packed = ok(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], repo), 'npm pack');
  const tarball = join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'view-consumer', private: true, type: 'module' })}\n`);
  ok(await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=peer', '--loglevel=error', tarball], app, 300_000), 'npm install (the tarball)');

  // Real sessions, recorded: a suspended and continued turn with a host tool round trip; another prompt; a crash + rerun.
  const suspended = await recordFixtureSession('view-a', 'first prompt LINES:6 INTERVAL:20 TOOL:lookup', 4);
  sessions.push(suspended);
  const other = await recordFixtureSession('view-b', 'second prompt LINES:6 INTERVAL:20 TOOL:lookup', 4);
  sessions.push(other);
  files.suspend = await concatRecording(suspended, 'suspend');
  files.other = await concatRecording(other, 'other');
  const stdoutSeqs = expected(files.suspend).records.filter((record) => record.kind === 'stdout').map((record) => record.seq);
  gapSeq = stdoutSeqs[Math.floor(stdoutSeqs.length / 2)]!;
  files.gap = join(work, 'gap.ndjson');
  cutRecord(files.suspend, gapSeq, files.gap);
  files.rerun = await recordCrashRerun();

  browser = await chromium.launchPersistentContext(mkdtempSync(join(work, 'chromium-profile-')), {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage();
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  // Nothing may leave the page: every request but the file itself fails the test.
  page.on('request', (request) => {
    if (!request.url().startsWith('file://') && !request.url().startsWith('data:') && !request.url().startsWith('http://127.0.0.1')) errors.push(`request ${request.url()}`);
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  for (const session of sessions) for (const sandbox of session.sandboxes) await sandbox.stop();
  for (const sandbox of sandboxes) await sandbox.stop();
  for (const session of sessions) await rm(session.root, { recursive: true, force: true });
  if (process.env.HARNESS_BRIDGE_KEEP_VIEW === '1') console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}, 60_000);

describe('harness-bridge view in a browser', () => {
  it('a suspended and continued turn: counts, record ↔ part, the host call and its answer, keys, a screenshot', async () => {
    const want = expected(files.suspend);
    expect(want.check.ok, 'the real recording is clean').toBe(true);
    await openPage(await view([files.suspend], 'suspend.html'));
    expect(await count('records')).toBe(want.records.length);
    expect(await count('parts')).toBe(want.parts.length);
    expect(await count('turns')).toBe(1);
    expect(await count('findings')).toBe(0);
    await expect(page.locator('[data-count="check"]').textContent()).resolves.toBe('check ok');
    // Every segment (the first slice, the continue) is flagged in the record list.
    await page.click('#tabs button[data-tab="flags"]');
    const segments = want.source.kind === 'recording' ? want.source.segments.length : 0;
    expect(segments).toBeGreaterThan(1);
    expect(await page.locator('tr.flag.segment').count()).toBe(segments);
    await page.click('#tabs button[data-tab="session"]');

    // Search for the host tool call, step to it: the record is selected and its part linked.
    const call = want.parts.findIndex((entry) => entry.part.type === 'tool-call');
    expect(call).toBeGreaterThan(0);
    const callSeq = want.parts[call]!.seq;
    await page.fill('#search', 'tool-call');
    await page.press('#search', 'Enter');
    await expect(page.locator('#search-status').getAttribute('data-matches')).resolves.not.toBe('0');
    const selected = page.locator('#records .row.rec.sel');
    await expect(selected.getAttribute('data-seq')).resolves.toBe(String(callSeq));
    const partLink = page.locator('#detail-parts a', { hasText: 'tool-call' });
    await expect(partLink.textContent()).resolves.toBe(`#${call} tool-call`);
    await partLink.click();
    await expect(page.locator('#parts .row.part.sel').getAttribute('data-part')).resolves.toBe(String(call));
    // Part → record: click another part of another record, its record becomes the selection.
    const finish = want.parts.findIndex((entry) => entry.part.type === 'finish');
    await page.fill('#search', 'finish');
    await page.press('#search', 'Enter');
    await page.locator(`#parts .row.part[data-part="${finish}"]`).click();
    await expect(selected.getAttribute('data-seq')).resolves.toBe(String(want.parts[finish]!.seq));
    await expect(page.locator('#detail').textContent()).resolves.toContain(`from record seq ${want.parts[finish]!.seq}`);
    // Usage per step and per turn, from the finish-step / finish parts.
    await expect(page.locator('.turn[data-turn="0"] .usage').textContent()).resolves.toMatch(/usage: in \d+ \/ out \d+ — step 1: in \d+ \/ out \d+/);
    // j moves to the next record; [ goes to the turn's first record; the timeline's x axis switches to time and back.
    await page.click('#records');
    const before = Number(await selected.getAttribute('data-rec'));
    await page.keyboard.press('j');
    await expect(selected.getAttribute('data-rec')).resolves.toBe(String(before + 1));
    await page.keyboard.press('[');
    await expect(selected.getAttribute('data-seq')).resolves.toBe(String(want.records.find((record) => record.kind === 'turn-start')!.seq));
    await page.click('#axis');
    await expect(page.locator('#axis').textContent()).resolves.toBe('time');
    await page.click('#axis');
    await expect(page.locator('#axis').textContent()).resolves.toBe('seq');

    // The host call: answered once, on the CLI's stdin, with a duration.
    await page.click('#tabs button[data-tab="calls"]');
    const rows = page.locator('#calls tbody tr');
    expect(await rows.count()).toBe(1);
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells[1]).toBe('lookup');
    expect(cells[4]).toContain(`seq ${callSeq}`);
    expect(cells[5]).toMatch(/^seq \d+$/);
    expect(Number(cells[5]!.slice(4))).toBeGreaterThan(callSeq);
    expect(cells[6]).toMatch(/^[\d,]+ ms$/);
    expect(cells[8]).toMatch(/^host, on the CLI's stdin \(segment \d+\)$/);
    await page.click('#tabs button[data-tab="session"]');

    const shot = await page.screenshot();
    expect(shot.subarray(1, 4).toString()).toBe('PNG');
    expect(shot.length, 'a screenshot with something on it').toBeGreaterThan(20_000);
    expect(errors).toEqual([]);
  });

  it('a gap: the --check finding is marked at its seq, counted on its turn, and n jumps to it', async () => {
    const want = expected(files.gap);
    const gap = want.check.violations.find((v) => v.rule === 'seq-gap');
    expect(gap, 'the library finds the gap').toBeDefined();
    await openPage(await view([files.gap, '--adapter', 'fixture'], 'gap.html'));
    expect(await count('findings')).toBe(want.check.violations.length + want.check.dropped);
    expect(await count('records')).toBe(want.records.length);
    expect(await page.locator('[data-findings]').first().getAttribute('data-findings')).toBe(String(want.check.violations.length));
    // n steps from flag to flag (segments, events, findings) until the gap is the one shown.
    await page.click('#records');
    for (let i = 0; i < 30 && !((await page.locator('#detail').textContent()) ?? '').includes('seq-gap'); i++) await page.keyboard.press('n');
    const mark = page.locator('#records .row.mark.finding[data-rule="seq-gap"]');
    expect(await mark.count()).toBeGreaterThan(0);
    await expect(mark.first().textContent()).resolves.toContain(`finding at seq ${gap!.seq}`);
    await expect(page.locator('#detail').textContent()).resolves.toContain('seq-gap');
    expect(errors).toEqual([]);
  });

  it('a crash + rerun: the rerun rung, the recomputed turn in a new journal, the segments', async () => {
    const want = expected(files.rerun);
    await openPage(await view([files.rerun], 'rerun.html'));
    expect(await count('records')).toBe(want.records.length);
    expect(await count('parts')).toBe(want.parts.length);
    await expect(page.locator('#source').textContent()).resolves.toMatch(/2 journals/);
    await expect(page.locator('.turn .badge', { hasText: 'rerun' }).count()).resolves.toBe(1);
    await page.click('#tabs button[data-tab="flags"]');
    await expect(page.locator('tr.flag.rung', { hasText: 'rung rerun' }).count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('tr.flag.recomputed').count()).resolves.toBe(1);
    // Clicking the flag shows it in the record list, before the recomputed turn's first record.
    await page.locator('tr.flag.recomputed a').click();
    await expect(page.locator('#records .row.mark.recomputed').count()).resolves.toBe(1);
    await page.screenshot({ path: join(work, 'rerun.png') });
    expect(readFileSync(join(work, 'rerun.png')).length).toBeGreaterThan(20_000);
    expect(errors).toEqual([]);
  });

  it('--diff: two sessions side by side, aligned by seq, differing rows marked; two adapter versions; one adapter against itself: the same', async () => {
    await openPage(await view([files.suspend, '--diff', files.other], 'diff.html'));
    await page.click('#tabs button[data-tab="diff"]');
    const differing = Number(((await page.locator('[data-count="diff-differing"]').textContent()) ?? '').replace(/[^\d]/g, ''));
    expect(differing).toBeGreaterThan(0);
    const row = page.locator('#diff .row.differ', { hasText: 'first prompt' }).first();
    await expect(row.locator('.a').textContent()).resolves.toContain('first prompt');
    await expect(row.locator('.b').textContent()).resolves.toContain('second prompt');

    // Two adapter versions on one recording: a plain adapter module whose translator shouts its deltas.
    writeFileSync(join(app, 'shouting.mjs'), shoutingAdapter);
    await openPage(await view([files.suspend, '--diff-adapter', './shouting.mjs'], 'versions.html'));
    await page.click('#tabs button[data-tab="diff"]');
    await expect(page.locator('#diff-head').textContent()).resolves.toContain('(./shouting.mjs)');
    const shouted = page.locator('#diff .row.differ', { hasText: 'FIRST PROMPT' }).first();
    await expect(shouted.locator('.a').textContent()).resolves.toContain('first prompt');
    await expect(shouted.locator('.b').textContent()).resolves.toContain('FIRST PROMPT');

    await openPage(await view([files.suspend, '--diff-adapter', 'fixture'], 'same.html'));
    await page.click('#tabs button[data-tab="diff"]');
    await expect(page.locator('[data-count="diff-differing"]').textContent()).resolves.toBe('0 differ');
    expect(await page.locator('#diff .row.differ').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it("the demo ends with the viewer: its printed view command writes a page of the demo's session", async () => {
    const dir = join(work, 'demo');
    const demo = ok(await run('npx', ['--no-install', 'harness-bridge', 'demo', '--adapter', 'fixture', '--dir', dir], app, 90_000), 'npx harness-bridge demo');
    const command = /harness-bridge (view \S+ --out \S+)/.exec(demo.stdout);
    expect(command, demo.stdout).not.toBeNull();
    const args = command![1]!.split(' ');
    ok(await run('npx', ['--no-install', 'harness-bridge', ...args], app), 'the printed view command');
    const want = expected(join(dir, 'recordings'));
    await openPage(args.at(-1)!);
    expect(await count('records')).toBe(want.records.length);
    expect(await count('parts')).toBe(want.parts.length);
    expect(await count('host calls')).toBe(1);
    // The README's picture: the demo's turn, its host tool call selected.
    await page.fill('#search', 'tool-call');
    await page.press('#search', 'Enter');
    await expect(page.locator('#detail-parts a', { hasText: 'tool-call' }).count()).resolves.toBe(1);
    const shot = await page.screenshot();
    expect(shot.length).toBeGreaterThan(20_000);
    if (process.env.HARNESS_BRIDGE_UPDATE_SCREENSHOT === '1') writeFileSync(join(repo, 'docs/images/viewer.png'), shot);
    expect(errors).toEqual([]);
  });

  it('a journal beyond the detail bound: every record counted, detail kept around turn edges and host calls, the rest elided', async () => {
    const path = join(work, 'big', 'journal.ndjson');
    mkdirSync(join(work, 'big'));
    const big = writeBigJournal(path, 12 * 2 ** 20); // ~35,000 records in 7 turns: above the 20,000 kept whole
    await openPage(await view([join(work, 'big')], 'big.html'));
    expect(await count('records')).toBe(big.records);
    expect(await count('turns')).toBe(big.turns);
    expect(await count('host calls')).toBe(big.toolCalls);
    const bound = (await page.locator('#bound').textContent()) ?? '';
    const kept = Number(/^([\d,]+) of ([\d,]+) records kept in detail/.exec(bound)?.[1]?.replace(/,/g, ''));
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(big.records / 2);
    // Per turn, every record is counted (bridge-start is the one outside a turn).
    const perTurn = await page.locator('[data-turn-records]').evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-turn-records'))));
    expect(perTurn.reduce((a, b) => a + b, 0)).toBe(big.records - 1);
    // Past the first turn's opening window, a run of elided records says how many.
    await page.locator('#records').evaluate((el) => {
      el.scrollTop = 40 * 20;
      el.dispatchEvent(new Event('scroll'));
    });
    const elided = page.locator('#records .row.elided').first();
    await expect(elided.textContent()).resolves.toMatch(/^… [\d,]+ records not kept in detail \(records #\d+–#\d+: stdout [\d,]+/);
    expect(errors).toEqual([]);
  });

  it('--serve: the same page on 127.0.0.1 at the printed URL; Ctrl-C stops it', async () => {
    // Its own process group: npx → sh → node, and Ctrl-C reaches all of them, as in a terminal.
    const child = spawn('npx', ['--no-install', 'harness-bridge', 'view', files.suspend, '--serve'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitUntil(() => /http:\/\/127\.0\.0\.1:\d+\//.test(out), 30_000);
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(out)![0];
      await page.goto(url);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
      expect(await count('records')).toBe(expected(files.suspend).records.length);
      process.kill(-child.pid!, 'SIGINT');
      const code = await Promise.race([closed, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000))]);
      expect(code, 'the server stops on Ctrl-C').not.toBe('running');
      await expect(fetch(url).then(() => 'served', () => 'refused')).resolves.toBe('refused');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    expect(errors).toEqual([]);
  });
});
