// The namespace half of the jail (docs/security.md#namespace): sandbox-runtime (srt, Apache-2.0,
// an external the recipe installs beside the bridge like node-pty; the jail helper loads it from the
// bundle beside the bridge when that is the installed version: srt-bundle.ts) wraps the CLI in
// bubblewrap with its own mount, pid and network namespaces and a seccomp filter, run as the CLI's
// uid when the bridge has one. What the CLI sees:
// - the file system read-only, except its project dir and its areas in the state dir (cli-dirs.ts);
// - the `.harness-bridge` dir (state dirs, tokens, journals, the network policy) hidden, except
//   this bridge's bootstrap dir (the CLI may be installed there) and the CLI's own areas;
// - its own pids only, so no /proc of the bridge, and `kill -9 -1` ends nothing outside;
// - no network but srt's proxy ports, which srt connects to this bridge's egress proxy
//   (egress-proxy.ts: the network policy, the MCP endpoint always, the host socket never), or for
//   a kept CLI (launch `survive`) to its keeper's (kept-egress.ts), which outlives the bridge.
// The probe here runs once per bridge, in stage 2: srt and its Debian packages present, and
// bubblewrap able to make the namespaces as the CLI's uid.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { AgentUser } from './agent-user.ts';
import { blockedAncestor } from './cli-dirs.ts';
import { aheadFits, type AheadWrap, type Jailed, type NamespaceWrap } from './cli-jail.ts';
import { freePort } from '../free-port.ts';
import { EgressProxy, type EgressLog } from './egress-proxy.ts';
import { endpointsNamedBy } from './named-endpoints.ts';
import type { KeptEgressSpec } from './kept-egress.ts';
import { onPath } from './jail-args.ts';
import { signalJailed } from './jail-signals.ts';
import { JailHelper } from './jail-helper.ts';
import { findSrt, srtIndexOf } from './srt-path.ts';
import { helperAlive } from './early-helper.ts';
import { randomBytes } from '../random.ts';
import { execFirst, innerScript, setByJail, shellQuote, shellSafePath, srtRelaySocket, waitScript } from './jail-shell.ts';

export type NamespaceSupport = { ok: true; wrap: NamespaceWrap; ahead: AheadWrap; egress: EgressProxy; close(): void } | { ok: false; reason: string };

/** Debian packages srt needs on Linux, by the binary each provides. */
const needed: ReadonlyArray<[binary: string, pkg: string]> = [
  ['bwrap', 'bubblewrap'],
  ['socat', 'socat'],
  ['rg', 'ripgrep'],
];
/** A probe that takes longer than this is a broken machine, not a slow one. */
const maxProbeMs = 15_000;

function seccompHelper(pkg: string): string | undefined {
  const arch = process.arch === 'x64' ? 'x64' : process.arch === 'arm64' ? 'arm64' : undefined;
  const helper = arch === undefined ? undefined : join(pkg, 'vendor', 'seccomp', arch, 'apply-seccomp');
  return helper !== undefined && existsSync(helper) ? helper : undefined;
}

/** bubblewrap makes the namespaces srt will ask for, as `user`, and srt's seccomp helper runs inside. */
function probe(helper: string, user: AgentUser | undefined): Promise<string | undefined> {
  const args = ['--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', helper, '/bin/true'];
  return new Promise((done) => {
    const child = spawn('bwrap', args, { stdio: ['ignore', 'ignore', 'pipe'], ...(user ? { uid: user.uid, gid: user.gid } : {}) });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-500)));
    const timer = setTimeout(() => child.kill('SIGKILL'), maxProbeMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      done(`bubblewrap could not be run: ${error.message}`);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done(code === 0 ? undefined : `bubblewrap cannot make the namespaces here${user ? ` as uid ${user.uid}` : ''} (${stderr.trim() || `exit ${code ?? signal}`}); user namespaces may be disabled`);
    });
  });
}

export async function namespaceSupport(options: {
  user: AgentUser | undefined;
  srt: string | undefined;
  stateDir: string;
  bridgeFile: string;
  /** The network policy file (hidden from the CLI). */
  policyFile: string | undefined;
  /** The dir holding every session's dir on this machine (--sessions-root): hidden but the CLI's own project and areas. */
  sessionsRoot?: string | undefined;
  /** The helper process the bridge started with itself (early-helper.ts), as its uid: it serves `user`'s CLIs, taking that uid at init. */
  early?: ChildProcess | undefined;
  log: EgressLog;
}): Promise<NamespaceSupport> {
  const { user } = options;
  if (process.platform !== 'linux') return { ok: false, reason: `namespaces are Linux only (this is ${process.platform})` };
  const missing = needed.filter(([binary]) => onPath(binary) === undefined).map(([, pkg]) => pkg);
  if (missing.length > 0) return { ok: false, reason: `the namespace needs the Debian packages ${missing.join(', ')} (not installed)` };
  const found = findSrt(options.srt, options.bridgeFile, createRequire);
  if ('error' in found) return { ok: false, reason: found.error };
  const helper = seccompHelper(found.pkg);
  if (helper === undefined) return { ok: false, reason: `sandbox-runtime has no seccomp helper for ${process.arch}` };
  if (user) {
    const blocked = blockedAncestor(join(found.cli, 'x'), user);
    if (blocked) return { ok: false, reason: `uid ${user.uid} cannot reach sandbox-runtime at ${found.pkg} (${blocked.dir} is mode ${blocked.mode.toString(8)})` };
  }
  // srt as a library, once per CLI uid (jail-helper.ts): each CLI spawn then costs a wrap and bubblewrap, not srt's
  // start. A helper runs as the uid of the CLIs it wraps (srt's relay sockets are theirs): the CLI user's, or the
  // bridge's own for a CLI that runs in the namespace without a uid of its own (cli-jail.ts: a project that uid
  // cannot reach, or a bridge file it cannot read: isolation.ts). The helper of the CLIs' uid is the one the bridge
  // started with itself (early-helper.ts), else one started here, before the probe: either way its Node start and
  // srt's load overlap the bridge's start, and its config (the egress proxy's port) follows once the proxy listens.
  // Any other starts at its first spawn. A helper that exits (killed) is replaced at the next spawn, saying so in
  // the log; one that fails makes that spawn fail with its whole error.
  const helpers = new Map<number | 'bridge', JailHelper>();
  let config: object | undefined;
  const logReady = (helper: JailHelper): void =>
    void helper.ready.then(
      () => {
        const { from, ms, note } = helper.srt ?? {};
        if (note !== undefined) options.log.warn({ srt: from, ms, note }, 'jail: the jail helper runs the installed sandbox-runtime, not the bundle beside the bridge');
        else options.log.info({ srt: from, ms }, 'jail: the jail helper is ready');
      },
      () => undefined, // its error fails the spawn that waits for it
    );
  const jailHelperOf = (asUser: AgentUser | undefined): JailHelper => {
    const key = asUser?.uid ?? 'bridge';
    const current = helpers.get(key);
    if (current !== undefined && !current.exitedAlready) return current;
    if (current !== undefined) options.log.warn({ uid: asUser?.uid ?? process.getuid?.() }, 'jail: the jail helper exited; starting a new one for this spawn');
    const helper = new JailHelper({
      bridgeFile: resolve(options.bridgeFile),
      srtIndex: srtIndexOf(found.pkg),
      ...(config === undefined ? {} : { config }),
      ...(asUser ? { credentials: { uid: asUser.uid, gid: asUser.gid } } : {}),
    });
    helpers.set(key, helper);
    logReady(helper);
    return helper;
  };
  const closeHelpers = (): void => {
    for (const started of helpers.values()) started.close();
  };
  // The CLIs' uid as isolation.ts decides it: one that cannot reach the bridge file runs them as the bridge's.
  const cliUser = user !== undefined && blockedAncestor(resolve(options.bridgeFile), user) === undefined ? user : undefined;
  const early = options.early !== undefined && helperAlive(options.early) ? new JailHelper({ bridgeFile: resolve(options.bridgeFile), srtIndex: srtIndexOf(found.pkg), child: options.early }) : undefined;
  if (early !== undefined) {
    helpers.set(cliUser?.uid ?? 'bridge', early);
    logReady(early);
  } else {
    jailHelperOf(cliUser);
  }

  const failed = await probe(helper, user);
  if (failed !== undefined) {
    closeHelpers();
    return { ok: false, reason: failed };
  }

  const egress = new EgressProxy(options.log);
  const stateDir = resolve(options.stateDir);
  const settingsDir = join(stateDir, 'jail');
  try {
    await egress.listen();
  } catch (error) {
    closeHelpers();
    throw error;
  }
  const hidden = hiddenDirs(stateDir, options.policyFile, options.sessionsRoot);
  // Found here once, so srt does not run `which` for them at its initialize and at every wrap (a process each).
  const binaries = { bwrapPath: onPath('bwrap')!, socatPath: onPath('socat')! };
  const bootstrap = dirname(resolve(options.bridgeFile));
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: egress.port, socksProxyPort: egress.port };
  config = { network, filesystem: { denyRead: hidden, allowRead: [], allowWrite: [], denyWrite: [] }, ...binaries };
  for (const started of helpers.values()) started.init(config, started === early && cliUser ? { uid: cliUser.uid, gid: cliUser.gid } : undefined);
  let counter = 0;

  /** What a launch is jailed with: srt's settings, and the env and key the jail's shell starts with. */
  const jailOf = (launch: LaunchSpec, dirs: Parameters<NamespaceWrap>[1]) => {
    const inHidden = (path: string) => hidden.some((dir) => path === dir || path.startsWith(dir + sep));
    const settings = {
      network,
      filesystem: {
        denyRead: hidden,
        allowRead: [...dirs.areas, ...(inHidden(bootstrap) ? [bootstrap] : []), ...(dirs.project !== undefined && inHidden(dirs.project) ? [dirs.project] : [])],
        allowWrite: [...dirs.areas, ...(dirs.project === undefined ? [] : [dirs.project])],
        denyWrite: [],
      },
    };
    // Inside, before the CLI: the MCP endpoint's loopback address made real (a socat listener that
    // tunnels through the egress proxy, so a client that ignores proxy variables reaches its host
    // tools too); no proxy exemptions (srt's NO_PROXY lists loopback and private ranges, which lead
    // nowhere in an empty network namespace); the CLI's own TMPDIR over srt's shared /tmp/claude.
    const mcpPort = mcpPortOf(launch);
    // srt's own TMPDIR is short: it binds its relay's unix socket there, and a state dir's path is often past
    // the ~108-byte socket path limit. The CLI gets its own TMPDIR back inside.
    const jailEnv: Record<string, string> = {
      TMPDIR: tmpdir(),
      HB_JAIL_TMPDIR: launch.env?.TMPDIR ?? '',
      HB_JAIL_MCP_PORT: mcpPort === undefined ? '' : String(mcpPort),
      // The forwarder's listening address as /proc/net/tcp shows it: 127.0.0.1 (little-endian hex) and the port in hex.
      HB_JAIL_MCP_LISTEN: mcpPort === undefined ? '' : `0100007F:${mcpPort.toString(16).toUpperCase().padStart(4, '0')}`,
    };
    // Launches with one key get the same jail: one started ahead for one serves the other (jail-ahead.ts).
    const key = JSON.stringify([settings.filesystem, launch.cwd, dirs.user?.uid ?? null, jailEnv]);
    return { settings, jailEnv, key };
  };
  const keptEgressOf = (launch: LaunchSpec, relay: { socket: string } | { port: number }): KeptEgressSpec => {
    const mcpPort = mcpPortOf(launch);
    return {
      ...relay,
      ...(mcpPort === undefined ? {} : { mcpPort }),
      ...(options.policyFile === undefined ? {} : { policyFile: resolve(options.policyFile) }),
      bridgePorts: egress.bridgePorts,
      namedLocal: egress.namedLocal,
      stateDir,
    };
  };
  const keptSocketPath = (): string => join(tmpdir(), `hb-kept-${randomBytes(8).toString('hex')}.sock`);

  const wrap: NamespaceWrap = async (launch: LaunchSpec, dirs, claim): Promise<Jailed> => {
    const { settings, jailEnv, key } = jailOf(launch, dirs);
    const inner = ['/bin/sh', '-c', innerScript, 'harness-bridge-jail', ...launch.argv];
    egress.nameLocal(endpointsNamedBy(launch.env)); // before jailEnv: the proxy is not a destination
    const env = { ...launch.env, ...jailEnv };
    // A jail started ahead for a launch like this one (by the spare keeper): the CLI takes it, its env and argv told to its shell.
    const held = aheadFits(launch) ? claim?.(key) : undefined;
    if (held !== undefined) {
      return {
        ok: true,
        launch: { ...launch, env, argv: held.start.argv },
        release: held.release,
        signal: signalJailed,
        keptEgress: keptEgressOf(launch, { socket: held.socket }),
        ahead: { marker: held.marker, keep: held.keep, argv: launch.argv },
      };
    }
    // A kept CLI (launch survive) leads to its keeper's egress proxy (kept-egress.ts), which outlives the
    // bridge, so its model stream and its MCP requests survive a crash: the helper's wrap with srt's relay
    // socket (the helper's, which ends with the bridge) swapped for one the keeper listens on.
    const keptSocket = launch.survive === true ? keptSocketPath() : undefined;
    let jailHelper = jailHelperOf(dirs.user);
    let wrapped: string;
    try {
      wrapped = await jailHelper.wrap(inner.map(shellQuote).join(' '), settings.filesystem, launch.cwd, keptSocket);
    } catch (error) {
      // A helper that was killed (before this spawn noticed, or SIGKILLed while it started) is replaced once; one that
      // fails on its own start fails the spawn with its error.
      if (!jailHelper.exitedAlready || !(jailHelper.wasReady || jailHelper.killed)) return { ok: false, message: `sandbox-runtime could not wrap the CLI: ${(error as Error).message}` };
      jailHelper = jailHelperOf(dirs.user);
      try {
        wrapped = await jailHelper.wrap(inner.map(shellQuote).join(' '), settings.filesystem, launch.cwd, keptSocket);
      } catch (again) {
        return { ok: false, message: `sandbox-runtime could not wrap the CLI: ${(again as Error).message}` };
      }
    }
    jailHelper.started();
    let released = false;
    const release = (): void => {
      if (!released) jailHelper.ended(keptSocket);
      released = true;
    };
    // `exec`: bwrap takes the shell's place, so its parent is the bridge and its --die-with-parent ends the
    // jailed CLI with the bridge (a CLI that ignores stdin EOF would otherwise outlive a SIGKILLed bridge,
    // under a shell parented to init).
    if (keptSocket === undefined) return { ok: true, launch: { ...launch, env, argv: ['/bin/sh', '-c', execFirst(wrapped)] }, release, signal: signalJailed };
    const relay = srtRelaySocket(wrapped);
    if (relay !== undefined && shellSafePath.test(keptSocket)) {
      return {
        ok: true,
        // `exec` here too: bubblewrap is the keeper's child, and a keeper that dies (SIGKILLed: nothing can adopt its CLI) takes the jail with it.
        launch: { ...launch, env, argv: ['/bin/sh', '-c', execFirst(wrapped.split(relay).join(keptSocket))] },
        release,
        signal: signalJailed,
        keptEgress: keptEgressOf(launch, { socket: keptSocket }),
      };
    }
    release();
    // Where the relay cannot be swapped (srt passed the mounts through a file of the helper's), the kept CLI
    // gets an srt process of its own, which lives as long as it does, with its relays led to the keeper's port.
    const keptPort = await freePort();
    mkdirSync(settingsDir, { recursive: true, mode: 0o711 });
    chmodSync(settingsDir, 0o711);
    const file = join(settingsDir, `${process.pid}-${++counter}.json`);
    writeFileSync(file, JSON.stringify({ ...settings, network: { ...network, httpProxyPort: keptPort, socksProxyPort: keptPort } }), { mode: 0o644 });
    chmodSync(file, 0o644); // srt reads it as the CLI's uid; the jail itself never sees it (the state dir is hidden)
    return {
      ok: true,
      launch: { ...launch, env, argv: [process.execPath, found.cli, '--settings', file, '--', ...inner] },
      release: () => rmSync(file, { force: true }),
      signal: signalJailed,
      keptEgress: keptEgressOf(launch, { port: keptPort }),
    };
  };
  // The jail a kept CLI like `launch` will need, made now (docs/bridge-internals.md#jail-ahead): srt's wrap of a shell
  // that waits on its stdin for the CLI's env and argv (the keeper writes them, survive/jail-ahead.ts), its relay led
  // to a keeper socket, as a kept CLI's is. Only where that swap can be made; anything else is made at the spawn.
  const ahead: AheadWrap = async (launch, dirs) => {
    if (!aheadFits(launch) || launch.cwd === undefined) return undefined;
    const { settings, jailEnv, key } = jailOf(launch, dirs);
    const socket = keptSocketPath();
    const marker = `hb-go-${randomBytes(16).toString('hex')}`;
    const inner = ['/bin/sh', '-c', waitScript, 'harness-bridge-jail', marker];
    const jailHelper = jailHelperOf(dirs.user);
    let wrapped: string;
    try {
      wrapped = await jailHelper.wrap(inner.map(shellQuote).join(' '), settings.filesystem, launch.cwd, socket);
    } catch {
      return undefined; // the spawn wraps again, and says why if it fails too
    }
    const relay = srtRelaySocket(wrapped);
    if (relay === undefined || !shellSafePath.test(socket)) {
      jailHelper.forget(socket);
      return undefined;
    }
    jailHelper.started();
    let released = false;
    return {
      key,
      start: { argv: ['/bin/sh', '-c', execFirst(wrapped.split(relay).join(socket))], cwd: launch.cwd, env: { PATH: launch.env?.PATH ?? process.env.PATH ?? '/usr/bin:/bin', ...jailEnv } },
      socket,
      marker,
      keep: setByJail(wrapped),
      release: () => {
        if (!released) jailHelper.ended(socket);
        released = true;
      },
    };
  };
  return {
    ok: true,
    wrap,
    ahead,
    egress,
    close: closeHelpers,
  };
}


/** The MCP endpoint's port from the env the bridge merged into the launch (MCP_ENV_V1). */
function mcpPortOf(launch: LaunchSpec): number | undefined {
  const url = launch.env?.[MCP_ENV_V1.urlEnvVar];
  if (url === undefined) return undefined;
  try {
    const port = Number(new URL(url).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the jail hides: the kit's `.harness-bridge` dir above the state dir (every session of this project's
 * state), else the state dir; the policy's dir; and the sessions root (every other session's dir on this
 * machine; the wrap binds the CLI's own project and areas back).
 */
function hiddenDirs(stateDir: string, policyFile: string | undefined, sessionsRoot: string | undefined): string[] {
  const parts = stateDir.split(sep);
  const at = parts.lastIndexOf('.harness-bridge');
  const dirs = [at > 0 ? parts.slice(0, at + 1).join(sep) : stateDir];
  for (const extra of [policyFile === undefined ? undefined : dirname(resolve(policyFile)), sessionsRoot === undefined ? undefined : resolve(sessionsRoot)]) {
    if (extra !== undefined && !dirs.some((d) => extra === d || extra.startsWith(d + sep))) dirs.push(extra);
  }
  return dirs;
}
