// What adapters of npm-published, long-lived, stdin-fed CLIs share: the options
// their factories take, the bootstrap recipe's npm install and where it puts the
// CLI, and the fixed half of their launch spec. argv, env, the turn-end matchers
// and the interrupt stay the adapter's.
import { posix } from 'node:path';
import type { HarnessV1BootstrapFile } from '../../protocol/harness-v1/bootstrap.ts';
import type { LaunchSpecInput } from '../../protocol/v1/launch-spec.ts';
import type { CliAdapterDefinition, CliPackage, LaunchContext } from './adapter.ts';

/** What an adapter factory takes (the reference adapters take these). */
export type CliAdapterOptions = {
  /** The model of a turn that names none; stream-start reports it. */
  modelId?: string;
  /** The CLI to run instead of the one the install commands put under the bootstrap dir. */
  binPath?: string;
  /** Env for the CLI: wins over the adapter's own. */
  extraEnv?: Record<string, string>;
  /**
   * Launch `survive` (default true; on pipes or a pty): the CLI runs under a keeper, outlives a SIGKILLed bridge and is
   * re-adopted by the next bridge on the state dir with its model stream, host tool calls and approvals in flight,
   * so a resume after a bridge crash is lossless (replay rung only, no rerun). `false`: the CLI dies with its
   * bridge and the unfinished turn is rerun, marked recomputed (docs/bridge-internals.md#surviving-clis).
   */
  survive?: boolean;
};

/**
 * `cli`, and an `install` that writes `files` (if any) and npm-installs the CLI into `<bootstrapDir>/cli`.
 * Pass the factory's `binPath`: with one, the install has no command (the CLI is already there, and an
 * npm install offline would wait on the network); the files are still written. The command itself skips
 * npm when that version of the package is already installed there (a recipe re-applied after the bridge
 * changed).
 */
export function npmCli(cli: CliPackage, files?: ReadonlyArray<HarnessV1BootstrapFile>, binPath?: string): Pick<CliAdapterDefinition<unknown>, 'cli' | 'install'> {
  if (binPath !== undefined) return { cli, ...(files ? { install: { files } } : {}) };
  const installed = `./${posix.join('cli/node_modules', cli.package, 'package.json')}`;
  const check = `node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' ${installed} ${cli.version} 2>/dev/null`;
  const command = `${check} || npm install --prefix cli --no-audit --no-fund --prefer-offline ${cli.package}@${cli.version}`;
  return { cli, install: { ...(files ? { files } : {}), commands: [{ command }] } };
}

/** The CLI's path in the sandbox: `binPath` when given, else where npmCli's install puts it. */
export function cliBinPath(cli: CliPackage, ctx: Pick<LaunchContext, 'bootstrapDir'>, binPath?: string): string {
  return binPath ?? posix.join(ctx.bootstrapDir, 'cli/node_modules/.bin', cli.bin);
}

/**
 * The credential variables a CLI takes from the sandbox's environment, by name (launch `passEnv`,
 * docs/security.md#cli-env): the CLI's environment is otherwise minimal, and nothing else of the
 * host's reaches it. A value in `extraEnv` wins over the sandbox's.
 */
export const CREDENTIAL_ENV = {
  anthropic: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_OAUTH_TOKEN'],
  openai: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'CODEX_API_KEY'],
  /** Gemini CLI (Google GenAI). */
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL'],
  /** pi's providers (each reads its own key). */
  pi: [
    'ANTHROPIC_API_KEY', 'ANTHROPIC_OAUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GROQ_API_KEY', 'CEREBRAS_API_KEY', 'XAI_API_KEY',
    'OPENROUTER_API_KEY', 'MISTRAL_API_KEY', 'ZAI_API_KEY', 'AZURE_OPENAI_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'AWS_PROFILE', 'AWS_REGION',
    'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'COPILOT_GITHUB_TOKEN',
  ],
} as const;

/** The adapter's half of a sessionLaunch spec. */
export type SessionLaunchParts = Pick<LaunchSpecInput, 'argv' | 'env' | 'io' | 'turnEnd' | 'inputAck' | 'interrupt'> & { passEnv?: ReadonlyArray<string> };

/**
 * A launch spec for a long-lived CLI fed over stdin (lifetime 'session', stdin a pipe), run in the
 * session's work dir; `survive` as in CliAdapterOptions (on unless `false`), on pipes and on a pty alike.
 */
export function sessionLaunch(ctx: Pick<LaunchContext, 'sessionWorkDir'>, survive: boolean | undefined, parts: SessionLaunchParts): LaunchSpecInput {
  const { argv, env, passEnv, io, turnEnd, inputAck, interrupt } = parts;
  return {
    argv,
    ...(env === undefined ? {} : { env }),
    ...(passEnv === undefined ? {} : { passEnv: [...passEnv] }),
    cwd: ctx.sessionWorkDir,
    stdin: 'pipe',
    ...(io === undefined ? {} : { io }),
    lifetime: 'session',
    ...(turnEnd === undefined ? {} : { turnEnd }),
    ...(inputAck === undefined ? {} : { inputAck }),
    ...(interrupt === undefined ? {} : { interrupt }),
    ...(survive !== false ? { survive: true } : {}),
  };
}
