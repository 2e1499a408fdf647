// host-channel (issue 3): the host side. Two figures, each beside the AI SDK's
// SandboxChannel doing the same:
//   parts/s  — a 200k-record turn through channel + translator. Measured twice:
//              "isolated": a frame server replays the frames the bridge sent,
//              as fast as the socket takes them, so only the host side is timed;
//              "via bridge": a fresh channel resuming from cursor 0 against
//              the real bridge holding that turn.
//   resume   — time from "continue this session from cursor N/2" to the first
//              part. ours: a BridgeSession suspended at part N/2, then
//              provider.resumeSession + doStart({resumeFrom}) + doContinueTurn,
//              with a translator snapshot and without. The first resume lands
//              while the bridge still streams the turn's second half (printed
//              apart); the median is over resumes of the bridge holding the
//              finished turn, as aisdk's: new SandboxChannel({initialLastSeenEventId})
//              + open({resume:true}), the handshake its adapters run on
//              doStart/doContinueTurn. ours' resume is also printed phase by
//              phase (probe, connect, hello, attach, snapshot restore, first
//              frame, first part), from host/phase-marks.ts's diagnostics channel.
// The AI SDK translates records to HarnessV1 parts inside its bridge, so its
// host side is SandboxChannel validating each frame against
// harnessV1BridgeOutboundMessageSchema and dispatching it; no host translator.
//
// ours needs host/channel/index.ts, host/adapter-kit/turn-translation.ts, host/adapter-kit/adapter.ts and
// dist/bridge.mjs: until they exist this scenario prints why ours is skipped
// and still measures aisdk.
import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { REPEATS, REPO, banner, benchLine, childEnv, fmt, median, runScenario, scaled, settle, skippedValue, tempDir, track, withTimeout } from './lib/common.mjs';
import { connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';
import { loadOursHost } from './lib/ours-host.mjs';

const SCENARIO = 'host-channel';

/** Why ours cannot run yet, or undefined when it can. */
function oursMissing() {
  const need = ['host/channel/index.ts', 'host/adapter-kit/turn-translation.ts', 'host/adapter-kit/adapter.ts'];
  const missing = need.filter((p) => !existsSync(path.join(REPO, p)));
  if (missing.length > 0) return `host kit not written yet (missing ${missing.join(', ')})`;
  if (!existsSync(path.join(REPO, 'dist/bridge.mjs'))) return 'dist/bridge.mjs missing (npm run build)';
  return undefined;
}

/**
 * Channel + translator until `count` parts came out. The translation starts at
 * the turn's turn-start record and emits only parts of records after
 * `emitAfter` — what a continuing session does. Returns {ms, firstMs}.
 */
async function oursChannelRun(host, { url, token, cursor, emitAfter, count }) {
  const t0 = performance.now();
  let parts = 0;
  let firstMs;
  let translation;
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  const channel = host.createBridgeChannel({
    url,
    token,
    cursor,
    onRecords(records) {
      for (const record of records) {
        if (record.kind === 'turn-start') translation = new host.TurnTranslation(host.adapter, { turnId: record.turnId, rerun: false }, emitAfter, new Set());
        if (!translation || record.turnId !== translation.turnId) continue;
        const out = translation.push(record);
        if (out.length === 0) continue;
        if (parts === 0) firstMs = performance.now() - t0;
        parts += out.length;
        if (parts >= count) resolveDone();
      }
    },
  });
  try {
    await withTimeout(
      Promise.race([done, channel.closed.then((error) => Promise.reject(error ?? new Error('channel closed')))]),
      Math.max(30_000, count / 2),
      `ours channel ${count} parts`,
    );
    return { ms: performance.now() - t0, firstMs };
  } finally {
    await channel.close();
  }
}

/** Captures what a fresh attach at cursor 0 receives: hello, replay-begin, records…, replay-end. */
async function captureOursReplay(bridge) {
  const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/`, { headers: { authorization: `Bearer ${bridge.token}` }, perMessageDeflate: false, maxPayload: 256 << 20 });
  const frames = [];
  try {
    await withTimeout(
      new Promise((resolve, reject) => {
        ws.on('error', reject);
        ws.on('message', (data) => {
          const text = data.toString();
          frames.push(text);
          if (frames.length === 1) ws.send(JSON.stringify({ type: 'attach', protocolVersion: '1.0', cursor: 0 }));
          if (text.startsWith('{"type":"replay-end"') || JSON.parse(text).type === 'replay-end') resolve();
        });
      }),
      60_000,
      'capture ours replay',
    );
  } finally {
    ws.terminate();
  }
  return frames;
}

async function measureOurs(count) {
  const missing = oursMissing();
  if (missing) throw new Error(missing);
  const host = await loadOursHost();
  const bridge = await launchBridge('ours');
  const url = `ws://127.0.0.1:${bridge.port}/`;
  try {
    const client = await connectClient(bridge);
    await client.prepareLive();
    client.start(emitterArgv(count));
    await client.waitFor((s) => s.lines >= count && s.turnEnds >= 1, Math.max(30_000, count / 5), `fill ${count} lines`);
    client.close();
    const frames = await captureOursReplay(bridge);
    let turnStart;
    for (const text of frames) {
      const frame = JSON.parse(text);
      if (frame.type !== 'records') continue;
      turnStart ??= frame.records.find((r) => r.kind === 'turn-start')?.seq;
    }
    if (turnStart === undefined) throw new Error('no turn-start record in the replay');
    const file = path.join(tempDir('frames'), 'ours.ndjson');
    writeFileSync(file, frames.join('\n') + '\n');
    const isolated = [];
    const viaBridge = [];
    const resume = [];
    for (let rep = 0; rep < REPEATS; rep++) {
      const server = track(spawn(process.execPath, [path.join(import.meta.dirname, 'lib/frame-server.mjs'), file], { env: childEnv(), stdio: ['ignore', 'pipe', 'inherit'] }));
      const port = await withTimeout(
        new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(d.toString()).port))),
        10_000,
        'frame server ready',
      );
      try {
        const run = await oursChannelRun(host, { url: `ws://127.0.0.1:${port}/`, token: bridge.token, cursor: 0, emitAfter: 0, count });
        isolated.push((count / run.ms) * 1000);
      } finally {
        server.kill('SIGKILL');
      }
      const full = await oursChannelRun(host, { url, token: bridge.token, cursor: 0, emitAfter: 0, count });
      viaBridge.push((count / full.ms) * 1000);
      // Continue from the middle: re-translate from the turn's first record, emit after the cursor.
      const half = turnStart + Math.floor(count / 2);
      const mid = await oursChannelRun(host, { url, token: bridge.token, cursor: turnStart - 1, emitAfter: half, count: 1 });
      resume.push(mid.firstMs);
    }
    const session = await measureOursSession(host, count, true);
    const sessionReplay = await measureOursSession(host, count, false);
    return {
      isolated: median(isolated),
      viaBridge: median(viaBridge),
      resumeMs: session.ms,
      busyResumeMs: session.busyMs,
      busyReplayMs: sessionReplay.busyMs,
      resumePhases: session.phases,
      replayPhases: sessionReplay.phases,
      channelResumeMs: median(resume),
      sessionReplayMs: sessionReplay.ms,
      runs: { isolated, viaBridge, resume: session.runs, replay: sessionReplay.runs },
    };
  } finally {
    await bridge.stop();
  }
}

/**
 * The real resume path: a BridgeSession suspended at part N/2 of a journaled
 * N-record turn; each repeat is a fresh harness instance doing
 * doStart({resumeFrom}) + doContinueTurn until its first part. With translator
 * snapshots the slice attaches at the cursor; without, it replays the turn
 * from its first record and suppresses parts up to the cursor.
 */
async function measureOursSession(host, count, snapshots) {
  const root = tempDir('session');
  const provider = host.createLocalSandboxProvider({ root: path.join(root, 'sandboxes'), templatesRoot: path.join(root, 'templates') });
  const adapter = host.sessionAdapter(emitterArgv(count), snapshots);
  const settings = { bridgeFile: path.join(REPO, 'dist/bridge.mjs'), probeTimeoutMs: 2_000 };
  const sandbox = await provider.createSession({ sessionId: 'resume' });
  const workDir = path.join(sandbox.defaultWorkingDirectory, 'work');
  mkdirSync(workDir, { recursive: true });
  const session = await host.createBridgeHarness(adapter, settings).doStart({ sessionId: 'resume', sandboxSession: sandbox, sessionWorkDir: workDir });
  let parts = 0;
  let suspended;
  const control = await session.doPromptTurn({
    prompt: '',
    emit: () => {
      if (++parts === Math.floor(count / 2) && !suspended) suspended = session.doSuspendTurn();
    },
  });
  await control.done;
  const state = await withTimeout(suspended, 60_000, 'suspend at N/2');
  const marks = [];
  const onMark = (mark) => marks.push(mark);
  const resumeOnce = async () => {
    marks.length = 0;
    const t0 = performance.now();
    const again = await provider.resumeSession({ sessionId: 'resume' });
    const resumed = await host.createBridgeHarness(adapter, { ...settings, skipBootstrap: true }).doStart({
      sessionId: 'resume',
      sandboxSession: again,
      sessionWorkDir: workDir,
      resumeFrom: state,
    });
    let first;
    const firstPart = new Promise((resolve) => (first = resolve));
    await resumed.doContinueTurn({ emit: () => first() });
    await withTimeout(firstPart, 60_000, 'first part after resume');
    const t1 = performance.now();
    const phases = breakdown(marks, t0, t1);
    await resumed.doSuspendTurn();
    return { ms: t1 - t0, phases };
  };
  subscribe(PHASE_MARKS, onMark);
  try {
    // The first resume lands while the bridge still journals and streams the turn's second half.
    const busy = await resumeOnce();
    // The others resume a bridge holding the finished turn (as aisdk's resume does): its turn-end is
    // journaled, and a second on, the memory release that follows the last record (200–400 ms) is done.
    await journalHas(root, '"kind":"turn-end"');
    await settle(1_000);
    const times = [];
    const breakdowns = [];
    for (let rep = 0; rep < Math.max(3, REPEATS); rep++) {
      const run = await resumeOnce();
      times.push(run.ms);
      breakdowns.push(run.phases);
      // The bridge was streaming the replay to the slice just suspended: let it settle.
      await settle(1_000);
    }
    return { ms: median(times), runs: times, phases: medianPhases(breakdowns), busyMs: busy.ms };
  } finally {
    unsubscribe(PHASE_MARKS, onMark);
    await sandbox.stop();
  }
}

/** Waits until the tail of a journal under `root` holds `text` (the bench's own session: one journal). */
async function journalHas(root, text) {
  const deadline = performance.now() + 120_000;
  for (;;) {
    for (const name of readdirSync(root, { recursive: true })) {
      if (!String(name).endsWith('journal.ndjson')) continue;
      const file = path.join(root, String(name));
      const size = statSync(file).size;
      const fd = openSync(file, 'r');
      const tail = Buffer.alloc(Math.min(size, 16_384));
      readSync(fd, tail, 0, tail.length, size - tail.length);
      closeSync(fd);
      if (tail.includes(text)) return;
    }
    if (performance.now() > deadline) throw new Error(`no journal under ${root} ends with ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The resume's phases, from host/phase-marks.ts marks (each ends at its mark; the first occurrence counts).
const PHASE_MARKS = 'harness-bridge:phase';
const PHASES = [
  ['sandbox', 'start'], // provider.resumeSession, up to doStart
  ['setup', 'bootstrap'], // doStart: resume state parsed, working dir, recipe (skipBootstrap)
  ['state', 'state-read'], // ladder: bridge.json + token read from the sandbox
  ['probe', 'probed'], // ladder: a socket to the live bridge, its hello, closed
  ['spawn', 'spawned'], // replay rung only: a new bridge on the state dir
  ['reach', 'reached'],
  ['restore', 'restored'], // BridgeSession built; doContinueTurn restores the translator snapshot
  ['connect', 'channel-open'], // channel socket: TCP + upgrade
  ['hello', 'channel-attaching'], // hello received, attach sent
  ['attach', 'channel-replaying'], // the bridge handled the attach: replay-begin
  ['frame', 'channel-records'], // first records frame (the journal read from the cursor)
  ['part', null], // the translator up to the first part emitted (without a snapshot: the turn's records up to the cursor)
];

function breakdown(marks, t0, t1) {
  const first = new Map();
  for (const { phase, at } of marks) if (!first.has(phase) && at >= t0) first.set(phase, at);
  const out = {};
  let last = t0;
  for (const [name, mark] of PHASES) {
    const at = mark === null ? t1 : first.get(mark);
    if (at === undefined) continue;
    out[name] = at - last;
    last = at;
  }
  return out;
}

function medianPhases(breakdowns) {
  const out = {};
  for (const [name] of PHASES) {
    const values = breakdowns.map((b) => b[name]).filter((v) => v !== undefined);
    if (values.length > 0) out[name] = median(values);
  }
  return out;
}

const showPhases = (phases) => Object.entries(phases).map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(' · ');

// ── aisdk ─────────────────────────────────────────────────────────────────
async function sdk() {
  const { SandboxChannel } = await import('@ai-sdk/harness/utils');
  const { harnessV1BridgeOutboundMessageSchema } = await import('@ai-sdk/harness');
  return { SandboxChannel, schema: harnessV1BridgeOutboundMessageSchema };
}

/** The connect thunk AI SDK adapters pass: open the socket, wait for bridge-hello. */
function connectThunk(url) {
  return () =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 << 20 });
      ws.once('error', reject);
      ws.once('message', () => resolve(ws)); // the first frame is bridge-hello
    });
}

/** Counts parts through a SandboxChannel until `count` raw parts arrived; returns {ms, firstMs}. */
async function sandboxChannelRun({ url, count, cursor, resume, sendStart }) {
  const { SandboxChannel, schema } = await sdk();
  const t0 = performance.now();
  const channel = new SandboxChannel({ connect: connectThunk(url), outboundSchema: schema, initialLastSeenEventId: cursor });
  let parts = 0;
  let firstMs;
  let errors = 0;
  const done = new Promise((resolve) => {
    channel.on('raw', () => {
      if (parts++ === 0) firstMs = performance.now() - t0;
      if (parts >= count) resolve();
    });
    channel.on('error', () => errors++);
  });
  try {
    await channel.open({ resume });
    if (sendStart) channel.send({ type: 'start', prompt: '', argv: ['true'] });
    await withTimeout(done, Math.max(30_000, count / 2), `SandboxChannel ${count} parts`);
    return { ms: performance.now() - t0, firstMs, errors };
  } finally {
    channel.close();
  }
}

async function measureAisdk(count) {
  const bridge = await launchBridge('aisdk');
  const url = `ws://127.0.0.1:${bridge.port}/?agent_bridge_token=${bridge.token}`;
  try {
    // One 200k-line turn, captured frame by frame by a plain client.
    const frames = [];
    const capture = new WebSocket(url, { perMessageDeflate: false });
    capture.on('message', (data) => frames.push(data.toString()));
    await withTimeout(new Promise((r, j) => (capture.once('open', r), capture.once('error', j))), 10_000, 'capture open');
    capture.send(JSON.stringify({ type: 'start', prompt: '', argv: emitterArgv(count) }));
    await withTimeout(
      (async () => {
        while (!frames.at(-1)?.includes('"type":"finish"')) await new Promise((r) => setTimeout(r, 20));
      })(),
      Math.max(30_000, count / 5),
      'capture finish',
    );
    capture.terminate();

    // isolated: frame server → SandboxChannel
    const file = path.join(tempDir('frames'), 'aisdk.ndjson');
    writeFileSync(file, frames.join('\n') + '\n');
    const isolated = [];
    const viaBridge = [];
    const resume = [];
    for (let rep = 0; rep < REPEATS; rep++) {
      const server = track(spawn(process.execPath, [path.join(import.meta.dirname, 'lib/frame-server.mjs'), file], { env: childEnv(), stdio: ['ignore', 'pipe', 'inherit'] }));
      const port = await withTimeout(
        new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(d.toString()).port))),
        10_000,
        'frame server ready',
      );
      const run = await sandboxChannelRun({ url: `ws://127.0.0.1:${port}/`, count, cursor: 0, resume: false, sendStart: true });
      server.kill('SIGKILL');
      isolated.push((count / run.ms) * 1000);
      // via bridge: resume from 0 against the live bridge holding the turn
      const full = await sandboxChannelRun({ url, count, cursor: 0, resume: true });
      viaBridge.push((count / full.ms) * 1000);
      // resume from the middle: time to the first replayed part
      const half = Math.floor(count / 2);
      const mid = await sandboxChannelRun({ url, count: 1, cursor: half, resume: true });
      resume.push(mid.firstMs);
    }
    return { isolated: median(isolated), viaBridge: median(viaBridge), resumeMs: median(resume), runs: { isolated, viaBridge, resume } };
  } finally {
    await bridge.stop();
  }
}

await runScenario(async () => {
  const count = scaled(200_000, 100);
  banner(SCENARIO, `host side: parts/s through channel + translator for a ${fmt(count)}-record turn; resume → first replayed part`);
  await prepareTargets();
  const aisdk = await measureAisdk(count);
  console.log(
    `  aisdk  SandboxChannel isolated ${fmt(aisdk.isolated)} parts/s · via bridge (resume from 0) ${fmt(aisdk.viaBridge)} parts/s · resume@${fmt(count / 2)} → first part ${aisdk.resumeMs.toFixed(1)} ms`,
  );
  console.log(`         runs: isolated ${aisdk.runs.isolated.map((v) => fmt(v)).join(', ')} · via bridge ${aisdk.runs.viaBridge.map((v) => fmt(v)).join(', ')} · resume ${aisdk.runs.resume.map((v) => v.toFixed(1)).join(', ')} ms`);
  let ours;
  let oursReason = '';
  try {
    ours = await measureOurs(count);
    console.log(
      `  ours   channel+translator isolated ${fmt(ours.isolated)} parts/s · via bridge (attach at 0) ${fmt(ours.viaBridge)} parts/s · resume@${fmt(count / 2)} → first part ${ours.resumeMs.toFixed(1)} ms (doStart({resumeFrom}) + doContinueTurn, translator snapshot)`,
    );
    console.log(
      `         same without a translator snapshot (replays the turn from its first record): ${ours.sessionReplayMs.toFixed(1)} ms · channel-level replay from the turn start: ${ours.channelResumeMs.toFixed(1)} ms`,
    );
    console.log(
      `         resume while the bridge still streams the turn's second half (the first resume): ${ours.busyResumeMs.toFixed(1)} ms with a snapshot, ${ours.busyReplayMs.toFixed(1)} ms without`,
    );
    console.log(`         resume breakdown, median ms, with snapshot: ${showPhases(ours.resumePhases)}`);
    console.log(`         resume breakdown, median ms, without:       ${showPhases(ours.replayPhases)}`);
    console.log(`         runs: isolated ${ours.runs.isolated.map((v) => fmt(v)).join(', ')} · via bridge ${ours.runs.viaBridge.map((v) => fmt(v)).join(', ')} · resume ${ours.runs.resume.map((v) => v.toFixed(1)).join(', ')} ms · replay ${ours.runs.replay.map((v) => v.toFixed(1)).join(', ')} ms`);
  } catch (error) {
    oursReason = oursMissing() ? error.message : `failed: ${error.message}`;
    if (!oursMissing()) process.exitCode = 1;
    console.log(`  ours   ${oursMissing() ? `skipped: ${error.message}` : `FAILED: ${error.stack ?? error.message}`}`);
  }
  console.log('  rawws  n/a (no host kit: the floor for the host side is the live/replay client in live.mjs/replay.mjs)');
  const shown = {
    ours: ours ? `${ours.isolated.toFixed(0)}parts/s,${ours.resumeMs.toFixed(1)}ms` : skippedValue(oursReason),
    aisdk: `${aisdk.isolated.toFixed(0)}parts/s,${aisdk.resumeMs.toFixed(1)}ms`,
    rawws: 'n/a',
  };
  const ok = ours ? ours.resumeMs < 50 : undefined;
  benchLine(SCENARIO, shown, '', `target-resume<50ms=${ok === undefined ? 'n/a' : ok ? 'met' : 'NOT met'}`, { ours: ours?.isolated, aisdk: aisdk.isolated });
});
