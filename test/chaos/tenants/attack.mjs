#!/usr/bin/env node
// The cross-tenant attacker (test/chaos/tenants.test.ts; docs/security.md#multi-session): a command
// session A's CLI runs, trying everything against the other sessions on this machine. It is told
// where everything of theirs is (state dir, project, bridge pid and port, MCP port) and tries to
// read their token, bridge.json, journal, log, home area and project files, write into their
// project and home, see and signal their processes, open their CLI's stdin, read their CLI's
// environ (the MCP token), reach their bridge and MCP ports directly, through its own egress proxy
// (and, through it, a loopback service of the host's that no launch named)
// and through any relay socket it finds in /tmp, connect to a kept CLI's keeper socket (/tmp/hb-kept-*),
// attach with any token it found, and hold as many
// connections to their bridge as it can while their host connects. Also: whether the host's
// secret variable reached its own environment. One JSON line per attempt in the results file.
//
// The host paces it through files in its own home area (the host reads and writes them; a project
// dir that holds the bridge's state stays the host's, so the CLI may only read it):
// ready.json (its own MCP port; its home secret is written) → go.json (the victims) → flood.json
// (tunnels held) → release → results.
//
//   node attack.mjs '<hints JSON>'   hints: {name, root}
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const hints = JSON.parse(process.argv[2] ?? '{}');
const require = createRequire(import.meta.url);
const { WebSocket } = require('ws');
const results = [];
const proxy = process.env.HTTP_PROXY ?? process.env.http_proxy;
const mcpPort = Number(new URL(process.env.HARNESS_BRIDGE_MCP_URL ?? 'http://127.0.0.1:0/').port);
const mailbox = process.env.HOME;
const code = (error) => error?.code ?? error?.message ?? String(error);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function note(victim, attempt, success, refusedBy, detail = '', extra = {}) {
  const line = { victim, attempt, success, refusedBy: success ? null : refusedBy, detail: String(detail).slice(0, 200), ...extra };
  results.push(line);
}

/** Whole or not there: the host reads a file as soon as it exists. */
function publish(name, text) {
  writeFileSync(join(mailbox, `${name}.tmp`), text);
  renameSync(join(mailbox, `${name}.tmp`), join(mailbox, name));
}

async function waitFor(file, limit = 1200) {
  for (let i = 0; i < limit && !existsSync(file); i++) await sleep(50);
  if (!existsSync(file)) throw new Error(`the host never wrote ${file}`);
  return readFileSync(file, 'utf8');
}

// Phase 0: a secret of its own in its home area (the others try to read it), and its MCP port.
writeFileSync(join(process.env.HOME, 'home-secret.txt'), `home secret of ${hints.name}\n`, { mode: 0o600 });
publish('ready.json', JSON.stringify({ mcpPort }));
const { victims, hostServicePort } = JSON.parse(await waitFor(join(mailbox, 'go.json')));

// The host's environment: the test sets HOST_SECRET_CANARY in every bridge's.
note('host', 'host-env-leak', process.env.HOST_SECRET_CANARY !== undefined, 'not-passed', Object.keys(process.env).sort().join(','));

function tryRead(victim, attempt, path, onText) {
  try {
    const text = readFileSync(path, 'utf8');
    onText?.(text);
    note(victim, attempt, true, null, `${path}: ${text.length} chars`);
  } catch (error) {
    note(victim, attempt, false, code(error), path);
  }
}

function tryCreate(victim, attempt, path) {
  try {
    closeSync(openSync(path, 'wx'));
    note(victim, attempt, true, null, path, { onHost: path });
  } catch (error) {
    note(victim, attempt, false, code(error), path);
  }
}

function tcp(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => resolve({ socket }));
    socket.once('error', (error) => resolve({ error: code(error) }));
    socket.once('timeout', () => (socket.destroy(), resolve({ error: 'timeout' })));
  });
}

/** An HTTP CONNECT to 127.0.0.1:`port` through a proxy reached at `via` (a port, or a unix socket path). */
function tunnel(port, via) {
  return new Promise((resolve) => {
    if (via === undefined) return resolve({ error: 'no-proxy' });
    const at = typeof via === 'string' ? { socketPath: via } : { host: '127.0.0.1', port: via };
    const req = request({ ...at, method: 'CONNECT', path: `127.0.0.1:${port}`, timeout: 5000 });
    req.on('connect', (res, socket) => (res.statusCode === 200 ? resolve({ socket }) : (socket.destroy(), resolve({ error: `proxy-${res.statusCode}` }))));
    req.on('error', (error) => resolve({ error: `proxy-${code(error)}` }));
    req.on('timeout', () => (req.destroy(), resolve({ error: 'proxy-timeout' })));
    req.end();
  });
}

const ownProxyPort = proxy ? Number(new URL(proxy).port) : undefined;
const open = (route, port) => (route === 'direct' ? tcp(port) : tunnel(port, ownProxyPort));

/** Attaches to a bridge with `token` over an opened socket; whether the bridge acked the attach. */
function attach(opened, port, token) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: token ? { authorization: `Bearer ${token}` } : {}, createConnection: () => opened.socket, handshakeTimeout: 5000 });
    const timer = setTimeout(() => (ws.terminate(), resolve({ error: 'timeout' })), 8000);
    ws.on('unexpected-response', (_req, res) => (clearTimeout(timer), resolve({ error: `http-${res.statusCode}` })));
    ws.on('error', (error) => (clearTimeout(timer), resolve({ error: code(error) })));
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === 'hello') ws.send(JSON.stringify({ type: 'attach', id: 'a', cursor: 0, journalId: frame.journalId, protocolVersion: frame.protocolVersion }));
      if (frame.id === 'a' && (frame.type === 'ack' || frame.type === 'error')) {
        clearTimeout(timer);
        ws.close();
        resolve(frame.type === 'ack' ? { attached: true } : { error: `bridge-${frame.code}` });
      }
    });
  });
}

/** Processes visible here whose parent chain reaches `pid` (a victim bridge's CLIs and their children). */
function descendantsOf(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  const out = [];
  for (const candidate of parent.keys()) {
    for (let p = parent.get(candidate), hops = 0; p !== undefined && p > 1 && hops < 64; p = parent.get(p), hops++) {
      if (p === pid) {
        out.push(candidate);
        break;
      }
    }
  }
  return out;
}

/** Unix sockets under /tmp (one level down too): srt's relays and keepers' sockets, every session's. */
function tmpSockets() {
  const found = [];
  const scan = (dir, depth) => {
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        const info = statSync(path);
        if (info.isSocket()) found.push(path);
        else if (info.isDirectory() && depth > 0) scan(path, depth - 1);
      } catch {
        // not ours to look at
      }
    }
  };
  scan('/tmp', 1);
  return found;
}

for (const v of victims) {
  const tokens = new Set();
  // 1. Files: the victim's sessions-root entry, state dir, home area and project.
  try {
    const names = readdirSync(hints.root);
    note(v.name, 'see-victim-session-dir', names.includes(v.sessionName), 'not-listed', names.join(','));
  } catch (error) {
    note(v.name, 'see-victim-session-dir', false, code(error), hints.root);
  }
  try {
    const names = readdirSync(v.stateDir);
    note(v.name, 'list-state-dir', true, null, names.join(','));
    for (const name of names.filter((n) => n.startsWith('token.new'))) tryRead(v.name, 'read-handed-token', join(v.stateDir, name), (t) => tokens.add(t.trim()));
  } catch (error) {
    note(v.name, 'list-state-dir', false, code(error), v.stateDir);
  }
  tryRead(v.name, 'read-token', join(v.stateDir, 'token'), (t) => tokens.add(t.trim()));
  tryRead(v.name, 'read-bridge-json', join(v.stateDir, 'bridge.json'));
  tryRead(v.name, 'read-journal', join(v.stateDir, 'journal.ndjson'));
  tryRead(v.name, 'read-bridge-log', join(v.stateDir, 'bridge.log'));
  tryRead(v.name, 'read-home-area', join(v.stateDir, 'home', 'home-secret.txt'));
  tryRead(v.name, 'read-project-file', join(v.project, 'secret.txt'));
  tryCreate(v.name, 'write-project', join(v.project, `planted-by-${hints.name}`));
  tryCreate(v.name, 'write-home-area', join(v.stateDir, 'home', `planted-by-${hints.name}`));

  // 2. Processes: the victim's bridge and whatever runs under it (its CLI, the CLI's commands).
  tryRead(v.name, 'read-bridge-environ', `/proc/${v.bridgePid}/environ`);
  try {
    process.kill(v.bridgePid, 0);
    note(v.name, 'signal-bridge', true, null);
  } catch (error) {
    note(v.name, 'signal-bridge', false, code(error));
  }
  const theirs = descendantsOf(v.bridgePid);
  const outcome = { signal: [], stdin: [], environ: [] };
  for (const pid of theirs) {
    try {
      process.kill(pid, 0);
      outcome.signal.push(pid);
    } catch {
      // another uid's
    }
    try {
      if (/^(socket|pipe):/.test(readlinkSync(`/proc/${pid}/fd/0`))) {
        closeSync(openSync(`/proc/${pid}/fd/0`, 'w'));
        outcome.stdin.push(pid);
      }
    } catch {
      // not ours to open
    }
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (env.includes('HARNESS_BRIDGE_MCP_TOKEN=')) outcome.environ.push(pid);
    } catch {
      // another uid's
    }
  }
  const seen = `${theirs.length} of its processes visible`;
  note(v.name, 'signal-victim-process', outcome.signal.length > 0, theirs.length ? 'uid' : 'not-visible', `${seen}; signalable ${outcome.signal.join(',')}`);
  note(v.name, 'inject-victim-stdin', outcome.stdin.length > 0, theirs.length ? 'uid' : 'not-visible', `${seen}; opened ${outcome.stdin.join(',')}`);
  note(v.name, 'read-victim-cli-environ', outcome.environ.length > 0, theirs.length ? 'uid' : 'not-visible', `${seen}; read ${outcome.environ.join(',')}`);

  // 3. Ports: the victim's bridge and MCP endpoint, directly, through its own egress proxy, and
  // through every relay socket in /tmp that is not its own (another session's egress proxy).
  for (const route of ['direct', 'proxy']) {
    for (const [what, port] of [['bridge', v.port], ['mcp', v.mcpPort]]) {
      const opened = await open(route, port);
      note(v.name, `reach-${what}-${route}`, !opened.error, opened.error, `127.0.0.1:${port}`);
      if (what === 'bridge' && !opened.error) {
        let best = 'not-attached';
        for (const token of [...tokens, '']) {
          const got = await attach(opened.socket.destroyed ? await open(route, port) : opened, port, token);
          if (got.attached) {
            best = null;
            break;
          }
          best = got.error;
        }
        note(v.name, `attach-${route}`, best === null, best);
      } else {
        opened.socket?.destroy();
        if (what === 'bridge') note(v.name, `attach-${route}`, false, opened.error);
      }
    }
  }
  {
    const relays = tmpSockets();
    const reached = [];
    for (const path of relays) {
      const got = await tunnel(v.port, path);
      if (!got.error) reached.push(path);
      got.socket?.destroy();
    }
    note(v.name, 'reach-bridge-through-other-relay', reached.length > 0, relays.length ? 'refused' : 'no-socket-visible', `${relays.length} sockets; reached through ${reached.join(',')}`);
  }
  // A kept CLI's egress socket (its keeper's proxy, 0600, the victim CLI's uid): any connection at all.
  if (v.keptSocket) {
    const got = await new Promise((resolve) => {
      const socket = connect(v.keptSocket);
      socket.once('connect', () => (socket.destroy(), resolve(null)));
      socket.once('error', (error) => resolve(code(error)));
    });
    note(v.name, 'connect-keeper-socket', got === null, got, v.keptSocket);
  }
}

// A service of the host's on its loopback (an app's admin port) that no launch named: through its own egress proxy under allow-all.
if (hostServicePort !== undefined) {
  const opened = await open('proxy', hostServicePort);
  note('host', 'reach-host-loopback-service-proxy', !opened.error, opened.error, `127.0.0.1:${hostServicePort}`);
  opened.socket?.destroy();
}

// 4. A connection flood at every victim's bridge, held while the host checks their real host still connects.
const held = [];
const perVictim = {};
for (const v of victims) {
  perVictim[v.name] = 0;
  for (const route of ['direct', 'proxy']) {
    for (let i = 0; i < 40; i++) {
      const opened = await open(route, v.port);
      if (opened.error) break;
      opened.socket.on('error', () => undefined);
      held.push(opened.socket);
      perVictim[v.name]++;
    }
  }
}
publish('flood.json', JSON.stringify(perVictim));
await waitFor(join(mailbox, 'release'));
for (const socket of held) socket.destroy();

publish('attack-results.ndjson', `${results.map((r) => JSON.stringify(r)).join('\n')}\n`);
process.stdout.write(`${JSON.stringify({ attacker: hints.name, attempts: results.length })}\n`);
