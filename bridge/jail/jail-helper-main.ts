// The jail helper's own side (jail-helper.ts has the protocol and the bridge's side): `node bridge.mjs
// --jail-helper <sandbox-runtime's dist/index.js>`, run as the CLI's uid. Reached from stage 1 (main.ts
// dispatches on argv), so everything is imported here, in helper mode only: cold start is unchanged.
import type { JailHelperReply } from './jail-helper.ts';

/** Helper side: `node bridge.mjs --jail-helper <sandbox-runtime's dist/index.js>`. */
export async function runJailHelper(srtIndex: string): Promise<void> {
  const { pathToFileURL } = await import('node:url');
  const { createInterface } = await import('node:readline');
  const srt = (await import(pathToFileURL(srtIndex).href)) as {
    SandboxManager: {
      initialize(config: unknown): Promise<void>;
      wrapWithSandbox(command: string, binShell?: string, customConfig?: unknown): Promise<string>;
      cleanupAfterCommand(): void;
    };
  };
  const say = (reply: JailHelperReply): void => void process.stdout.write(`${JSON.stringify(reply)}\n`);
  process.stdout.on('error', () => process.exit(0));
  // The bridge holds our stdin: when it is gone, so are we (the command lines we handed out die with their relays).
  process.stdin.on('end', () => process.exit(0));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => process.exit(0));
  // srt reads the dangerous files to protect from its cwd, walking it a few levels deep: each wrap runs in
  // the CLI's cwd, or, where this uid cannot enter it, in an empty dir of the helper's own (never `/`, whose
  // walk takes seconds). Wraps take turns, since the cwd is the process's.
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const empty = mkdtempSync(join(tmpdir(), 'hb-jail-'));
  process.chdir(empty);
  process.on('exit', () => rmSync(empty, { recursive: true, force: true }));
  const enter = (cwd: unknown): void => {
    try {
      process.chdir(typeof cwd === 'string' ? cwd : empty);
    } catch {
      process.chdir(empty);
    }
  };
  let ready: Promise<void> | undefined;
  let turn: Promise<void> = Promise.resolve();
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let message: { t?: string; id?: number; config?: unknown; command?: string; filesystem?: unknown; cwd?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      continue;
    }
    if (message.t === 'init' && ready === undefined) {
      ready = srt.SandboxManager.initialize(message.config);
      ready.then(
        () => say({ t: 'ready' }),
        (error: unknown) => say({ t: 'error', message: `sandbox-runtime did not start: ${(error as Error).message}` }),
      );
    } else if (message.t === 'wrap' && typeof message.id === 'number' && typeof message.command === 'string') {
      const id = message.id;
      const command = message.command;
      const filesystem = message.filesystem;
      const cwd = message.cwd;
      turn = turn.then(async () => {
        try {
          await ready;
          enter(cwd);
          say({ t: 'wrapped', id, command: await srt.SandboxManager.wrapWithSandbox(command, undefined, { filesystem }) });
        } catch (error) {
          say({ t: 'error', id, message: (error as Error).message });
        }
      });
    } else if (message.t === 'cleanup') {
      try {
        srt.SandboxManager.cleanupAfterCommand();
      } catch {
        // nothing to clean
      }
    }
  }
  process.exit(0);
}

