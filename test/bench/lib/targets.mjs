// The three bridges under comparison, behind one small interface:
//   ours  — dist/bridge.mjs (protocol/v1: hello → attach → replay-begin/-end → records frames)
//   aisdk — @ai-sdk/harness@1.0.122 runBridge, driven by ./aisdk-bridge.mjs (one frame per event)
//   rawws — ./rawws-bridge.mjs, the floor (one JSON array of lines per tick)
// The two comparison bridges are bundled with esbuild (everything inlined, like
// dist/bridge.mjs) into a temp dir, so all three start from one file.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { BRIDGE_SNAPSHOT, bridgeArgv, bridgeEnv, snapshotBuildCommand } from '../../../bootstrap/bridge-command.mjs';
import { BENCH_DIR, ESM_BUNDLE, REPO, childEnv, tempDir, track, withTimeout } from './common.mjs';

export const TARGETS = ['ours', 'aisdk', 'rawws'];
export const OURS_BRIDGE = path.join(REPO, 'dist', 'bridge.mjs');
export const EMITTER = path.join(BENCH_DIR, 'lib', 'emit-lines.mjs');
const READY_TIMEOUT_MS = 20_000;

let bundled;
/** Bundles the comparison bridges once per process; reports which targets can run. */
export async function prepareTargets() {
  if (bundled) return bundled;
  const { build } = await import('esbuild');
  const outDir = tempDir('bundle');
  const files = {};
  for (const [name, entry] of [
    ['aisdk', 'aisdk-bridge.mjs'],
    ['rawws', 'rawws-bridge.mjs'],
  ]) {
    const outfile = path.join(outDir, `${name}-bridge.mjs`);
    await build({
      entryPoints: [path.join(BENCH_DIR, 'lib', entry)],
      outfile,
      ...ESM_BUNDLE,
    });
    files[name] = outfile;
  }
  const oursReady = existsSync(OURS_BRIDGE);
  // ours with its startup snapshot (the recipe's startupSnapshot option): built here as the recipe builds it.
  let snapshotBlob;
  if (oursReady) {
    const dir = tempDir('snapshot');
    copyFileSync(OURS_BRIDGE, path.join(dir, 'bridge.mjs'));
    copyFileSync(path.join(path.dirname(OURS_BRIDGE), BRIDGE_SNAPSHOT.script), path.join(dir, BRIDGE_SNAPSHOT.script));
    const built = spawnSync('sh', ['-c', snapshotBuildCommand()], { cwd: dir, env: childEnv({ HB_NODE: process.execPath, HB_FILE: 'bridge.mjs' }), encoding: 'utf8' });
    if (existsSync(path.join(dir, BRIDGE_SNAPSHOT.blob))) snapshotBlob = path.join(dir, BRIDGE_SNAPSHOT.blob);
    else console.log(`  (no startup snapshot for ours: ${built.stderr.trim()})`);
  }
  bundled = {
    files: { ours: OURS_BRIDGE, ...files },
    snapshotBlob,
    available: {
      ours: oursReady ? true : `dist/bridge.mjs missing (run npm run build once bridge/main.ts exists)`,
      aisdk: true,
      rawws: true,
    },
  };
  return bundled;
}

export function fileSize(target) {
  return statSync(bundled.files[target]).size;
}

/** Emitter argv: the same CLI for every bridge. */
export function emitterArgv(count, extra = []) {
  return [process.execPath, EMITTER, '--count', String(count), ...extra];
}

/**
 * Spawns a bridge process and waits for its `bridge-ready` line.
 * Returns { target, child, pid, port, readyMs, token, stderrTail(), stop() }.
 */
/** `snapshot`: ours started from its startup snapshot (prepareTargets built it; throws if it could not). `env`: more environment (the CLIs it spawns inherit it). */
export async function launchBridge(target, { stateDir = tempDir(`${target}-state`), retain = false, snapshot = false, env: extraEnv = {} } = {}) {
  const { files, snapshotBlob } = await prepareTargets();
  if (snapshot && (target !== 'ours' || snapshotBlob === undefined)) throw new Error(`no startup snapshot for ${target}`);
  const token = randomBytes(16).toString('hex');
  const args = {
    // The host kit's launch (bootstrap/bridge-command.mjs): node flags + bridge.mjs + args, and its environment (bridgeEnv).
    ours: bridgeArgv({ bridgeFile: files.ours, stateDir, port: 0, ...(snapshot ? { snapshotBlob } : {}) }),
    aisdk: [files.aisdk, '--state-dir', stateDir, '--port', '0'],
    rawws: [files.rawws, '--port', '0', ...(retain ? ['--retain'] : [])],
  }[target];
  const targetEnv = {
    ours: { HARNESS_BRIDGE_TOKEN: token, ...bridgeEnv() },
    aisdk: { BRIDGE_CHANNEL_TOKEN: token },
    rawws: { RAWWS_TOKEN: token },
  }[target];
  const env = childEnv({ ...targetEnv, ...extraEnv });
  const t0 = performance.now();
  const child = track(spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO }));
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const ready = await withTimeout(
    new Promise((resolve, reject) => {
      let out = '';
      const onData = (chunk) => {
        out += chunk.toString();
        const nl = out.indexOf('\n');
        if (nl === -1) return;
        child.stdout.off('data', onData);
        child.stdout.resume(); // keep draining so the bridge never blocks on stdout
        try {
          const line = JSON.parse(out.slice(0, nl));
          if (line.type !== 'bridge-ready') throw new Error(`first stdout line is not bridge-ready: ${out.slice(0, nl)}`);
          resolve({ line, ms: performance.now() - t0 });
        } catch (error) {
          reject(error);
        }
      };
      child.stdout.on('data', onData);
      child.once('exit', (code, signal) =>
        reject(new Error(`${target} bridge exited (${code ?? signal}) before ready; stderr: ${stderr.slice(-1000)}`)),
      );
      child.once('error', reject);
    }),
    READY_TIMEOUT_MS,
    `${target} bridge ready line`,
  ).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    target,
    child,
    pid: child.pid,
    port: ready.line.port,
    readyMs: ready.ms,
    ready: ready.line,
    token,
    stateDir,
    stderrTail: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Same clock as the emitter's `t` stamps: CLOCK_MONOTONIC, shared by all processes. */
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000;

/**
 * A host-side ws client for one bridge. Counts CLI lines (and optionally hands
 * each to onLine(text, receivedAtMonotonicMs)), turn ends and replay ends.
 */
export async function connectClient(bridge, { onLine } = {}) {
  const { target, port, token } = bridge;
  const url =
    target === 'aisdk'
      ? `ws://127.0.0.1:${port}/?agent_bridge_token=${token}`
      : `ws://127.0.0.1:${port}/`;
  const ws = new WebSocket(url, {
    headers: target === 'aisdk' ? {} : { authorization: `Bearer ${token}` },
    perMessageDeflate: false,
    maxPayload: 256 << 20,
  });
  const state = { lines: 0, turnEnds: 0, replayEnds: 0, lastSeq: 0, hello: undefined, error: undefined };
  const waiters = new Set();
  const check = () => {
    for (const waiter of waiters) {
      if (state.error) waiter.reject(state.error);
      else if (waiter.pred(state)) waiter.resolve(state);
      else continue;
      waiters.delete(waiter);
    }
  };
  const fail = (error) => {
    state.error ??= error;
    check();
  };

  const handlers = {
    ours(text) {
      const frame = JSON.parse(text);
      switch (frame.type) {
        case 'records': {
          const at = onLine ? now() : 0;
          for (const record of frame.records) {
            state.lastSeq = record.seq;
            if (record.kind === 'stdout') {
              state.lines++;
              if (onLine) onLine(record.data.text, at);
            } else if (record.kind === 'turn-end') state.turnEnds++;
          }
          break;
        }
        case 'hello':
          state.hello = frame;
          break;
        case 'replay-end':
          state.replayEnds++;
          break;
        case 'error':
          fail(new Error(`ours: error frame ${frame.code}: ${frame.message}`));
          break;
      }
    },
    aisdk(text) {
      const event = JSON.parse(text);
      switch (event.type) {
        case 'raw':
          state.lastSeq = event.seq;
          state.lines++;
          if (onLine) onLine(event.rawValue, now());
          break;
        case 'finish':
          state.lastSeq = event.seq;
          state.turnEnds++;
          break;
        case 'bridge-hello':
          state.hello = event;
          break;
        case 'error':
          fail(new Error(`aisdk: error event ${JSON.stringify(event.error)}`));
          break;
      }
    },
    rawws(text) {
      const frame = JSON.parse(text);
      if (Array.isArray(frame)) {
        state.lines += frame.length;
        if (onLine) {
          const at = now();
          for (const line of frame) onLine(line, at);
        }
      } else if (frame.type === 'turn-end') state.turnEnds++;
      else if (frame.type === 'replay-end') state.replayEnds++;
    },
  };
  const handle = handlers[target];
  ws.on('message', (data) => {
    try {
      handle(data.toString());
    } catch (error) {
      fail(error);
      return;
    }
    check();
  });
  ws.on('close', (code, reason) => fail(new Error(`${target}: socket closed ${code} ${reason}`)));
  ws.on('error', (error) => fail(error));

  const waitFor = (pred, ms, what) =>
    withTimeout(
      new Promise((resolve, reject) => {
        const waiter = { pred, resolve, reject };
        waiters.add(waiter);
        check();
      }),
      ms,
      `${target}: ${what}`,
    );

  await withTimeout(
    new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    }),
    10_000,
    `${target}: ws open`,
  );
  if (target !== 'rawws') await waitFor((s) => s.hello !== undefined, 10_000, 'hello');

  let turns = 0;
  const send = (frame) => ws.send(JSON.stringify(frame));
  return {
    state,
    waitFor,
    /** Claim the stream from `cursor` (ours: attach; aisdk: resume; rawws: replay of retained lines). */
    attach(cursor = 0) {
      if (target === 'ours') send({ type: 'attach', protocolVersion: '1.0', cursor });
      else if (target === 'aisdk') send({ type: 'resume', lastSeenEventId: cursor });
      else send({ type: 'replay' });
    },
    /** Make this client the live owner before a turn (ours needs an attach; the others claim on start). */
    async prepareLive(ms = 10_000) {
      if (target !== 'ours') return;
      const before = state.replayEnds;
      send({ type: 'attach', protocolVersion: '1.0', cursor: state.lastSeq });
      await waitFor((s) => s.replayEnds > before, ms, 'replay-end after attach');
    },
    /** `launch`: more launch fields for ours (e.g. { survive: true }); the other bridges have none. */
    start(argv, launch = {}) {
      turns++;
      if (target === 'ours') send({ type: 'start', id: `r${turns}`, turnId: `t${turns}`, launch: { argv, stdin: 'null', ...launch } });
      else if (target === 'aisdk') send({ type: 'start', prompt: '', argv });
      else send({ type: 'start', argv });
    },
    close() {
      waiters.clear();
      ws.removeAllListeners('close');
      ws.removeAllListeners('error');
      ws.on('error', () => {});
      ws.terminate();
    },
  };
}
