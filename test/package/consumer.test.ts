// The package as a user gets it: `npm pack`, the tarball installed into a fresh
// project under os.tmpdir() beside the public AI SDK packages (from the npm
// registry, --prefer-offline over the default npm cache), then:
// - the tarball's file list (lib/, the dist files, README, package.json;
//   no test/, no .ts but declarations), its file count and size printed;
// - every relative link (and #anchor) of the Markdown it ships resolves in the
//   installed package; package.json names the repository; each cache path it
//   names for a user (~/.cache/…) has the root one (/var/cache/…) beside it;
// - one @ai-sdk/provider and one @ai-sdk/provider-utils in the installed tree;
// - every public entry imported from plain node, `npx harness-bridge --help`;
// - the README's "Use it from the AI SDK" program, verbatim (README.md holds
//   test/package/consumer/readme.mjs), run with plain node;
// - HarnessAgent flows with the fixture adapter and the local sandbox provider,
//   plain .mjs, no TypeScript loader (test/package/consumer/*.mjs): a turn;
//   one with startupSnapshot (the bridge starts from the snapshot the recipe built);
//   suspend, then continue in a second process; stop → resume and detach →
//   resume, each in a second process; an aborted turn through
//   toUIMessageStream + readUIMessageStream, then another turn. After each flow
//   the session's sandbox is gone and no process it started is left;
// - consumer.ts type-checked against the published .d.ts with skipLibCheck
//   off, under moduleResolution node16 and bundler (errors inside other
//   packages' .d.ts are printed, not failed on: they are upstream's);
// - every ```ts block of docs/writing-an-adapter.md, one module each,
//   type-checked against the installed package (what an adapter author
//   outside this repo compiles);
// - the guide's tutorial: examples/tiny-cli/ copied into the project, its
//   adapter quoted verbatim in the guide, and the guide's step commands run
//   as written (capture, translator test, run + replay --check against the
//   scripted model, conformance).
// npm test runs it once per Node runtime (20, 22, 24: lanes consumer*). The lib/ build fails on type
// errors; HARNESS_BRIDGE_ALLOW_TYPE_ERRORS=1 builds it anyway (trying the
// package while the tree is being fixed). HARNESS_BRIDGE_KEEP_CONSUMER=1 keeps
// the temporary project.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDocLinks } from './doc-links.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const programs = join(repo, 'test/package/consumer');
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, string | { types: string; default: string }>;
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
  repository: { type: string; url: string };
};

/** The public packages the consumer installs beside ours, at the versions we test against. */
const consumerDependencies = {
  '@ai-sdk/harness': manifest.devDependencies['@ai-sdk/harness']!,
  ai: manifest.devDependencies.ai!,
  zod: '4.6.7',
  '@types/node': manifest.devDependencies['@types/node']!,
};

type Ran = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number };

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${options.timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Throws with the command's output unless it exited 0. */
function ok(ran: Ran, what: string): Ran {
  if (ran.code !== 0) throw new Error(`${what} exited ${ran.code ?? ran.signal}:\n--- stdout\n${tail(ran.stdout)}\n--- stderr\n${tail(ran.stderr)}`);
  return ran;
}

/** The numbered lines the fixture CLI prints for a prompt: `<prompt> #<n>\n`. */
function fixtureLines(prompt: string, from: number, to: number): string {
  let text = '';
  for (let n = from; n < to; n++) text += `${prompt} #${n}\n`;
  return text;
}

let work = '';
let app = '';
let cacheHome = '';
let pack: { filename: string; size: number; unpackedSize: number; entryCount: number; files: Array<{ path: string }> };

const flowEnv = (): NodeJS.ProcessEnv => ({ ...process.env, XDG_CACHE_HOME: cacheHome, NODE_OPTIONS: '' });

/** Runs a consumer program with plain node and returns the facts it reported (its last stdout line). */
async function program(file: string, args: string[] = [], timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const ran = ok(await run(process.execPath, [file, ...args], { cwd: app, env: flowEnv(), timeoutMs }), `node ${[file, ...args].join(' ')}`);
  const last = ran.stdout.trimEnd().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    throw new Error(`node ${file} printed no facts line:\n${tail(ran.stdout)}\n--- stderr\n${tail(ran.stderr)}`);
  }
}

/** Processes whose command line names this run's temporary directory (bridges, fixture CLIs): Linux /proc. */
function strays(): Array<{ pid: number; cmdline: string }> {
  if (!existsSync('/proc/self/cmdline')) return [];
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (cmdline.includes(work)) found.push({ pid: Number(name), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** After a flow that ends with destroy(): its sandbox directory is gone and none of its processes is left. */
async function expectCleanedUp(flow: string): Promise<void> {
  const sandboxes = join(cacheHome, 'harness-bridge', 'sandboxes');
  const left = existsSync(sandboxes) ? readdirSync(sandboxes) : [];
  let running = strays();
  for (let i = 0; i < 10 && running.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100)); // a process that is exiting may linger a moment
    running = strays();
  }
  for (const { pid } of running) {
    try {
      process.kill(pid, 'SIGKILL'); // started by this flow; the next flow starts clean
    } catch {
      // already gone
    }
  }
  for (const entry of left) rmSync(join(sandboxes, entry), { recursive: true, force: true });
  expect({ sandboxesLeft: left, processesLeft: running.map((p) => p.cmdline) }, `${flow}: destroy() leaves no sandbox and no process`).toEqual({
    sandboxesLeft: [],
    processesLeft: [],
  });
}

describe('the published package, installed in a fresh project', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'harness-bridge-consumer-'));
    // mkdtemp makes it 0700; a bridge running as root spawns the CLI under its own uid, which must reach the project.
    chmodSync(work, 0o755);
    app = join(work, 'app');
    cacheHome = join(work, 'cache');
    mkdirSync(app);
    const allow = process.env.HARNESS_BRIDGE_ALLOW_TYPE_ERRORS === '1' ? ['--allow-type-errors'] : [];
    // dist/ is built by the global setup; lib/ here (npm pack's prepack would rebuild dist/ under running tests),
    // unless the lane runner's build lane built both from this tree already (HARNESS_BRIDGE_BUILT=1, test/global-setup.ts).
    if (process.env.HARNESS_BRIDGE_BUILT !== '1') {
      ok(await run(process.execPath, ['scripts/build-lib.mjs', ...allow], { cwd: repo, timeoutMs: 240_000 }), 'scripts/build-lib.mjs');
    }
    const packed = ok(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo, timeoutMs: 120_000 }), 'npm pack');
    pack = (JSON.parse(packed.stdout) as (typeof pack)[])[0]!;
    console.log(
      `npm pack: ${pack.filename}: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(1)} KiB packed, ${(pack.unpackedSize / 1024).toFixed(1)} KiB unpacked`,
    );
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify(
        {
          name: 'harness-bridge-consumer',
          private: true,
          type: 'module',
          dependencies: { [manifest.name]: `file:../${pack.filename}`, ...consumerDependencies },
        },
        null,
        2,
      )}\n`,
    );
    const installed = ok(
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, timeoutMs: 300_000 }),
      'npm install in the consumer',
    );
    console.log(`npm install in the consumer: ${(installed.ms / 1000).toFixed(1)} s`);
    for (const entry of readdirSync(programs)) cpSync(join(programs, entry), join(app, entry));
  }, 600_000);

  afterAll(() => {
    if (!work) return;
    for (const { pid } of strays()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (process.env.HARNESS_BRIDGE_KEEP_CONSUMER === '1') console.log(`kept the consumer project: ${app}`);
    else rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds lib/, the bridge, the CLI and its fixture CLI, README, the docs it links and package.json: no tests, no sources', () => {
    const paths = pack.files.map((file) => file.path).sort();
    const top = [...new Set(paths.map((path) => (path.includes('/') ? `${path.split('/')[0]}/` : path)))].sort();
    expect(top).toEqual(['README.md', 'dist/', 'docs/', 'host/', 'lib/', 'package.json']);
    expect(paths).toEqual(expect.arrayContaining(['docs/writing-an-adapter.md', 'docs/acp.md', 'host/testing/scripted-model/README.md']));
    expect(paths.filter((path) => path.startsWith('host/'))).toEqual(['host/testing/scripted-model/README.md']);
    expect(paths.filter((path) => path.startsWith('dist/'))).toEqual(['dist/bridge-snapshot.cjs', 'dist/bridge.mjs', 'dist/cli.mjs', 'dist/fixture-cli.mjs', 'dist/jail-srt.txt']);
    expect(paths.filter((path) => /(^|\/)test\//.test(path) || /\.test\./.test(path)), 'test files').toEqual([]);
    expect(paths.filter((path) => /\.m?ts$/.test(path) && !/\.d\.m?ts$/.test(path)), '.ts sources').toEqual([]);
    expect(paths.filter((path) => /\.map$/.test(path)), 'source maps (they would point at sources we do not ship)').toEqual([]);
    // Every export and the bin are in the tarball.
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : [target.types, target.default]));
    for (const target of [...targets, ...Object.values(manifest.bin)]) expect(paths, `${target} is packed`).toContain(target.replace(/^\.\//, ''));
    // A coarse bound against a stray tree (each lib module is a .js and a .d.ts): what may be packed is checked above.
    expect(pack.entryCount).toBeLessThan(500);
  });

  it("the shipped Markdown's relative links (README, docs/, the scripted model's README) resolve in the installed package, anchors included; package.json names the repository", () => {
    const installed = join(app, 'node_modules', manifest.name);
    const packed = new Set(pack.files.map((file) => file.path));
    const markdown = [...packed].filter((path) => path.endsWith('.md')).sort();
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/writing-an-adapter.md', 'docs/acp.md', 'host/testing/scripted-model/README.md']));
    const { links, broken } = checkDocLinks(installed, markdown);
    console.log(`[figures] installed package: ${markdown.length} Markdown files, ${links.length} relative links, ${broken.length} broken`);
    expect(broken).toEqual([]);
    // The README's links name files of the tarball (not of a checkout beside it).
    const fromReadme = [...new Set(links.filter((link) => link.from === 'README.md').map((link) => link.target))];
    expect(fromReadme.length).toBeGreaterThan(5);
    for (const target of fromReadme) expect(packed.has(target), `README links ${target}: in the tarball`).toBe(true);
    const installedManifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { repository?: { type: string; url: string } };
    expect(installedManifest.repository).toEqual(manifest.repository);
    expect(installedManifest.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
  });

  it('wherever a shipped doc or declaration names the cache dir for a user (~/.cache/harness-bridge), it names the one for root (/var/cache/harness-bridge) beside it', () => {
    const installed = join(app, 'node_modules', manifest.name);
    const shipped = pack.files.map((file) => file.path).filter((path) => /\.(md|d\.ts|d\.mts|mjs)$/.test(path));
    let named = 0;
    for (const path of shipped) {
      const text = readFileSync(join(installed, path), 'utf8');
      for (const m of text.matchAll(/~\/\.cache\/harness-bridge/g)) {
        named++;
        const around = text.slice(Math.max(0, m.index - 300), m.index + 300);
        expect(around, `${path}: ${JSON.stringify(text.slice(m.index, m.index + 80))} without the root path`).toContain('/var/cache/harness-bridge');
      }
    }
    console.log(`[figures] installed package: ${named} mentions of ~/.cache/harness-bridge in ${shipped.length} docs and declarations, each beside the root path`);
    expect(named).toBeGreaterThan(3);
  });

  it('the installed tree holds one @ai-sdk/provider and one @ai-sdk/provider-utils (npm ls is clean)', async () => {
    ok(await run('npm', ['ls', '--all'], { cwd: app, timeoutMs: 60_000 }), 'npm ls --all (a missing or invalid peer fails it)');
    for (const name of ['@ai-sdk/provider', '@ai-sdk/provider-utils']) {
      const listed = ok(await run('npm', ['ls', '--all', '--parseable', name], { cwd: app, timeoutMs: 60_000 }), `npm ls ${name}`);
      const copies = [...new Set(listed.stdout.split('\n').filter((line) => line.includes(`node_modules/${name}`)))];
      expect(copies.map((path) => path.slice(app.length + 1)), `copies of ${name}`).toEqual([`node_modules/${name}`]);
    }
  }, 120_000);

  it('every public entry loads in plain node, and `npx harness-bridge --help` runs', async () => {
    const names = Object.keys(manifest.exports).filter((key) => key !== './package.json');
    const script = [
      'const out = {};',
      ...names.map((key) => `out[${JSON.stringify(key)}] = Object.keys(await import(${JSON.stringify(key.replace(/^\./, manifest.name))})).sort();`),
      'console.log(JSON.stringify(out));',
    ].join('\n');
    const loaded = ok(await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeoutMs: 30_000 }), 'importing every entry');
    const exported = JSON.parse(loaded.stdout) as Record<string, string[]>;
    expect(exported['.']).toEqual(expect.arrayContaining(['createBridgeHarness', 'createLocalSandboxProvider', 'HarnessBridgeError', 'BridgeSessionError']));
    expect(exported['./adapters/claude-code']).toContain('claudeCodeAdapter');
    expect(exported['./adapters/codex']).toContain('codexAdapter');
    expect(exported['./adapters/pi']).toContain('piAdapter');
    expect(exported['./adapter-kit']).toEqual(
      expect.arrayContaining(['defineCliAdapter', 'readJsonLine', 'completeLine', 'partWriter', 'takeSnapshot', 'readSnapshot', 'usageFromCounts', 'ensureCli', 'cliPaths']),
    );
    expect(exported['./bootstrap']).toEqual(expect.arrayContaining(['bridgeRecipe', 'applyBootstrap', 'defaultBridgeFile']));
    expect(exported['./protocol']).toEqual(expect.arrayContaining(['PROTOCOL_VERSION_V1', 'recordSchema']));
    expect(exported['./testing']).toEqual(
      expect.arrayContaining(['fixtureAdapter', 'adapterConformance', 'sandboxProviderConformance', 'startDemoModel', 'startModelServer', 'checkEveryCutResumes', 'journalOfLines']),
    );
    // The kit finds the bridge it ships by itself.
    const bridgeFile = ok(
      await run(process.execPath, ['--input-type=module', '-e', "import { defaultBridgeFile } from 'harness-bridge/bootstrap'; console.log(defaultBridgeFile());"], {
        cwd: app,
        timeoutMs: 30_000,
      }),
      'defaultBridgeFile',
    ).stdout.trim();
    expect(bridgeFile).toBe(join(app, 'node_modules', manifest.name, 'dist', 'bridge.mjs'));
    const help = ok(await run('npx', ['--no-install', 'harness-bridge', '--help'], { cwd: app, timeoutMs: 30_000 }), 'npx harness-bridge --help');
    expect(help.stdout).toMatch(/demo/);
    expect(help.stdout).toMatch(/replay/);
  }, 120_000);

  it("the README's program is test/package/consumer/readme.mjs, and it runs with plain node", async () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const source = readFileSync(join(programs, 'readme.mjs'), 'utf8');
    expect(readme, 'README.md quotes readme.mjs verbatim in a ```js block').toContain(`\`\`\`js\n${source}\`\`\``);
    const ran = ok(await run(process.execPath, ['readme.mjs'], { cwd: app, env: flowEnv(), timeoutMs: 60_000 }), 'node readme.mjs');
    expect(ran.stdout).toBe(`${fixtureLines('Hello from the README LINES:3', 0, 3)}finish: stop\n`);
    await expectCleanedUp('readme.mjs');
  }, 120_000);

  it('startupSnapshot: the recipe builds the snapshot in the sandbox and the session\'s bridge starts from it', async () => {
    const facts = await program('snapshot.mjs');
    expect(facts.text).toBe(fixtureLines('snapshot LINES:3', 0, 3));
    const bridges = facts.bridges as string[][];
    expect(bridges).toHaveLength(1);
    expect(bridges[0]![0]).toBe('--snapshot-blob');
    expect(bridges[0]![1]).toMatch(/\/\.harness-bridge\/fixture\/bridge\.snapshot\.blob$/);
    await expectCleanedUp('snapshot.mjs');
  }, 120_000);

  it('suspend in one process, continue in a second: every line once, in order', async () => {
    const stateFile = join(work, 'suspended.json');
    const first = await program('suspend.mjs', [stateFile]);
    const second = await program('continue.mjs', [stateFile]);
    const all = fixtureLines('count LINES:40 INTERVAL:50', 0, 40);
    const firstText = String(first.text);
    expect(firstText.length, 'the first process saw some lines, not all').toBeGreaterThan(0);
    expect(all.startsWith(firstText) && firstText.length < all.length, `the first process's text is a strict prefix:\n${firstText}`).toBe(true);
    expect(`${firstText}${String(second.text)}`).toBe(all);
    expect(second.finishReason).toBe('stop');
    await expectCleanedUp('suspend → continue');
  }, 180_000);

  for (const how of ['stop', 'detach'] as const) {
    it(`${how} in one process, resume in a second, another turn`, async () => {
      const stateFile = join(work, `${how}.json`);
      const first = await program('resume.mjs', [how, 'first', stateFile]);
      expect(first).toEqual({ text: fixtureLines(`before ${how} LINES:2`, 0, 2), finishReason: 'stop' });
      const second = await program('resume.mjs', [how, 'second', stateFile]);
      expect(second).toEqual({ text: fixtureLines(`after ${how} LINES:2`, 0, 2), finishReason: 'stop', isResume: true });
      await expectCleanedUp(`${how} → resume`);
    }, 180_000);
  }

  // The user's view (docs/guarantees.md#ui): ui-flow.mjs folds each stream with readUIMessageStream (terminateOnError), every
  // chunk checked by uiMessageChunkSchema. `mutation` breaks the installed kit first (then puts it back): the flows must fail.
  const uiLines = fixtureLines('ui LINES:20 INTERVAL:40', 0, 20);
  type Problems = string[];
  const clean = (problems: Problems, what: string, facts: Record<string, unknown>) => {
    if (facts.foldError !== null) problems.push(`${what}: readUIMessageStream threw: ${String(facts.foldError)}`);
    if (facts.invalid !== 0) problems.push(`${what}: ${String(facts.invalid)} chunk(s) uiMessageChunkSchema refused`);
    if ((facts.errors as string[]).length > 0) problems.push(`${what}: error chunks ${JSON.stringify(facts.errors)}`);
  };
  /** Each UI flow: runs its programs and adds what it finds wrong to `problems`, each led by the flow's name. */
  const flows = {
    whole: async (problems: Problems) => {
      const whole = await program('ui-flow.mjs', ['whole', '-']);
      clean(problems, 'whole', whole);
      if (whole.text !== uiLines) problems.push(`whole: the message's text is not the turn's 20 lines once each`);
    },
    'suspend → continue': async (problems: Problems, tag: string) => {
      const suspendFile = join(work, `ui-suspend-${tag}.json`);
      const shown = await program('ui-flow.mjs', ['suspend', suspendFile]);
      const continued = await program('ui-flow.mjs', ['continue', suspendFile]);
      clean(problems, 'suspend → continue', continued);
      if (continued.text !== uiLines || String(shown.text).length >= uiLines.length) problems.push(`suspend → continue: the final message is not the uninterrupted one (${JSON.stringify(continued.text).slice(0, 120)})`);
    },
    'stop → resume → continue': async (problems: Problems, tag: string) => {
      const stopFile = join(work, `ui-stop-${tag}.json`);
      const before = await program('ui-flow.mjs', ['stop', stopFile]);
      const after = await program('ui-flow.mjs', ['continue', stopFile]);
      clean(problems, 'stop → resume → continue', after);
      const seen = String(after.text);
      const stopLines = fixtureLines('stopped LINES:200 INTERVAL:20', 0, 200);
      if (!seen.startsWith(String(before.text)) || !stopLines.startsWith(seen) || seen.length >= stopLines.length) problems.push(`stop → resume → continue: shown again or re-run (${JSON.stringify(seen).slice(0, 120)})`);
      if (after.finishReason !== 'other' || after.nextText !== fixtureLines('after LINES:2', 0, 2)) problems.push(`stop → resume → continue: finish ${String(after.finishReason)}, next turn ${JSON.stringify(after.nextText)}`);
    },
    'host tool': async (problems: Problems) => {
      const tool = await program('ui-flow.mjs', ['tool', '-']);
      clean(problems, 'host tool', tool);
      if (JSON.stringify(tool.toolPart) !== JSON.stringify({ state: 'output-available', output: 'found it' })) problems.push(`host tool: the UI part is ${JSON.stringify(tool.toolPart)}`);
      if (JSON.stringify(tool.toolResults) !== JSON.stringify([{ toolName: 'lookup', output: 'found it' }])) problems.push(`host tool: generate().toolResults ${JSON.stringify(tool.toolResults)}`);
    },
  } as const;
  type Flow = keyof typeof flows;

  /** Runs the named UI flows (all by default), with the installed kit broken by `mutation` meanwhile; what went wrong. */
  async function uiFlows(names: readonly Flow[] = Object.keys(flows) as Flow[], mutation?: keyof typeof mutations): Promise<Problems> {
    const problems: Problems = [];
    const restore = mutation ? mutate(mutation) : () => undefined;
    try {
      for (const name of names) await flows[name](problems, mutation ?? 'none');
    } catch (error) {
      problems.push(`a flow program failed: ${(error as Error).message.split('\n')[0]}`);
    } finally {
      restore();
    }
    return problems;
  }

  /**
   * Breaks in the installed kit's lib/ the flows must catch: what each replaces, and with what; the flow meant to catch
   * it (the only one the mutation runs) and how that flow's first problem starts.
   */
  const mutations = {
    'drop the re-opened block': {
      edit: ['host/adapter-kit/turn-translation.js', 'out.push(start);', ''],
      caughtBy: 'suspend → continue',
      says: 'suspend → continue: readUIMessageStream threw: Received text-delta for missing text part',
    },
    'resend a shown delta': {
      edit: ['host/session/turn-consumer.js', 'for (const part of parts)\n                slice.emit(part);', "for (const part of parts) { slice.emit(part); if (part.type === 'text-delta') slice.emit(part); }"],
      caughtBy: 'whole',
      says: "whole: the message's text is not the turn's 20 lines once each",
    },
    'drop the tool-result': {
      edit: ['host/adapter-kit/turn-translation.js', 'return [hostToolResult(', 'return []; void [hostToolResult('],
      caughtBy: 'host tool',
      says: 'host tool: the UI part is {"state":"input-available"',
    },
  } as const satisfies Record<string, { edit: readonly [string, string, string]; caughtBy: Flow; says: string }>;
  function mutate(name: keyof typeof mutations): () => void {
    const [file, find, replace] = mutations[name].edit;
    const path = join(app, 'node_modules', manifest.name, 'lib', file);
    const original = readFileSync(path, 'utf8');
    expect(original.split(find), `${name}: the text to break is in ${file}, once`).toHaveLength(2);
    writeFileSync(path, original.replace(find, replace));
    return () => writeFileSync(path, original);
  }

  it('the UI message of a turn suspended and continued in a second process, stopped and resumed, and with a host tool is the uninterrupted one', async () => {
    expect(await uiFlows()).toEqual([]);
    await expectCleanedUp('ui flows');
  }, 300_000);

  for (const name of Object.keys(mutations) as Array<keyof typeof mutations>) {
    it(`the UI flows fail with the kit broken: ${name}`, async () => {
      const { caughtBy, says } = mutations[name];
      const problems = await uiFlows([caughtBy], name);
      console.log(`[figures] consumer ui-flows mutation="${name}" flow="${caughtBy}" caught=${problems.length > 0} first="${(problems[0] ?? '').slice(0, 160)}"`);
      expect(problems[0] ?? 'nothing: the flow saw no break', `the ${caughtBy} flow sees the break at the check meant for it`).toContain(says);
      // A broken kit may leave a flow's session behind: cleared here, not counted.
      for (const { pid } of strays()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      const sandboxes = join(cacheHome, 'harness-bridge', 'sandboxes');
      if (existsSync(sandboxes)) for (const entry of readdirSync(sandboxes)) rmSync(join(sandboxes, entry), { recursive: true, force: true });
    }, 300_000);
  }

  it('an aborted turn through toUIMessageStream + readUIMessageStream ends as aborted, and the session takes another turn', async () => {
    const facts = await program('abort-ui.mjs');
    const uiText = String(facts.uiText);
    const all = fixtureLines('long LINES:200 INTERVAL:30', 0, 200);
    expect(facts.chunkTypes).toEqual(expect.arrayContaining(['start', 'text-start', 'text-delta', 'abort']));
    expect(facts.chunkTypes, 'an abort, not an error').not.toContain('error');
    expect(facts.end).toEqual({ isAborted: true, outcome: 'aborted' });
    expect(all.startsWith(uiText) && uiText.length < all.length, `the UI message holds the text before the abort:\n${uiText}`).toBe(true);
    expect(uiText.split('\n').length).toBeGreaterThan(3);
    expect({ text: facts.nextText, finishReason: facts.nextFinishReason }).toEqual({ text: fixtureLines('next LINES:2', 0, 2), finishReason: 'stop' });
    await expectCleanedUp('abort');
  }, 120_000);

  it("docs/writing-an-adapter.md: every ```ts block type-checks against the installed package", async () => {
    const guide = readFileSync(join(repo, 'docs/writing-an-adapter.md'), 'utf8');
    const blocks = [...guide.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
      body!.split('\n').map((line) => line.slice(indent!.length)).join('\n'),
    );
    expect(blocks.length, 'the guide has ts blocks').toBeGreaterThan(1);
    const dir = join(app, 'guide');
    mkdirSync(dir, { recursive: true });
    const files = blocks.map((body, i) => {
      writeFileSync(join(dir, `block-${i}.ts`), body);
      return `guide/block-${i}.ts`;
    });
    const config = { compilerOptions: { target: 'ES2022', module: 'node16', moduleResolution: 'node16', moduleDetection: 'force', types: ['node'], strict: true, skipLibCheck: true, noEmit: true }, files };
    writeFileSync(join(app, 'tsconfig.guide.json'), JSON.stringify(config, null, 2));
    const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.guide.json', '--pretty', 'false'], { cwd: app, timeoutMs: 180_000 });
    console.log(`[figures] docs/writing-an-adapter.md: ${blocks.length} ts blocks type-checked against ${pack.filename}`);
    expect(`${checked.stdout}${checked.stderr}`.trim(), 'tsc over the guide\'s blocks').toBe('');
    expect(checked.code).toBe(0);
  }, 240_000);

  it("docs/writing-an-adapter.md's tutorial: examples/tiny-cli, its steps run as written against the installed package", async () => {
    const guide = readFileSync(join(repo, 'docs/writing-an-adapter.md'), 'utf8');
    const example = join(repo, 'examples/tiny-cli');
    const adapter = readFileSync(join(example, 'tiny-adapter.mjs'), 'utf8');
    expect(guide, 'the guide quotes tiny-adapter.mjs verbatim in a ```js block').toContain(`\`\`\`js\n${adapter}\`\`\``);
    const steps = /<a id="tutorial-steps"><\/a>[\s\S]*?```sh\n([\s\S]*?)```/.exec(guide)?.[1]?.split('\n').filter((line) => line.trim() !== '');
    expect(steps?.length, "the tutorial's steps block").toBeGreaterThan(3);
    const dir = join(app, 'tiny-cli');
    cpSync(example, dir, { recursive: true });
    const outputs: string[] = [];
    for (const step of steps!) {
      const ran = ok(await run('sh', ['-c', step], { cwd: dir, env: flowEnv(), timeoutMs: 300_000 }), step);
      outputs.push(ran.stdout);
      console.log(`[figures] tutorial: \`${step}\`: ${(ran.ms / 1000).toFixed(1)} s; ${ran.stdout.trimEnd().split('\n').at(-1)}`);
    }
    const [capture, translator, runTurn, replay, conformance] = outputs;
    expect(capture).toMatch(/fixtures\/text\.jsonl: \d+ lines/);
    expect(translator).toMatch(/translator: 4 fixtures, \d+ cut points resumed exactly/);
    expect(runTurn).toMatch(/Scripted reply 1 \(text\): you said "hello"\./);
    expect(runTurn).toMatch(/run summary: parts=\d+ finish=stop/);
    expect(replay).toMatch(/^ok: /m);
    expect(conformance).toMatch(/conformance: (\d+) of \1 cases pass or skip/);
    expect(conformance).not.toMatch(/^FAIL/m);
  }, 900_000);

  for (const mode of ['node16', 'bundler'] as const) {
    it(`consumer.ts type-checks against the published .d.ts (moduleResolution ${mode}, skipLibCheck off)`, async () => {
      const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
      const checked = await run(process.execPath, [tsc, '-p', `tsconfig.${mode}.json`, '--pretty', 'false'], { cwd: app, timeoutMs: 180_000 });
      // One diagnostic per entry: its first line names the file; continuation lines are indented.
      const diagnostics = `${checked.stdout}${checked.stderr}`.split(/\n(?=\S)/).filter((entry) => entry.trim() !== '');
      // With skipLibCheck off, upstream .d.ts carry errors of their own (@ai-sdk/provider's json-schema types are a
      // devDependency of it; ai's internal `download`): printed, not ours to fail on.
      const upstream = diagnostics.filter((entry) => entry.startsWith('node_modules/') && !entry.startsWith(`node_modules/${manifest.name}/`));
      if (upstream.length > 0) console.warn(`tsc -p tsconfig.${mode}.json: upstream .d.ts errors (not harness-bridge's):\n${upstream.join('\n')}`);
      const ours = diagnostics.filter((entry) => !upstream.includes(entry));
      expect(ours.join('\n'), `tsc -p tsconfig.${mode}.json: errors in consumer.ts or harness-bridge's .d.ts`).toBe('');
      expect(diagnostics.length === 0 ? checked.code : 0, 'tsc exits 0 when it reports nothing').toBe(0);
    }, 240_000);
  }
});
