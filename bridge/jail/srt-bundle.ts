// sandbox-runtime as one pre-built file beside the bridge (`jail-srt.txt`, shipped in the recipe): the jail helper
// loads it instead of srt's ~85 ES modules, in about a third of the time (the figures: docs/bridge-internals.md#first-output).
// esbuild.config.mjs builds it from the pinned srt: its
// SandboxManager as CommonJS, brotli, base64, after a first line naming that srt version. It is used only when the srt
// installed beside the bridge is that same version, and it runs as if it were that package's dist/sandbox module
// (its import.meta.url is), so srt's vendored files (the seccomp filter, apply-seccomp) are the installed package's.
// Otherwise, or when the file is absent or unreadable, the installed srt is imported, as it is without the bundle.
import type { SrtModule } from './srt-module.ts';

/** The bundle's file name beside the bridge file: bootstrap/bridge-command.mjs's BRIDGE_JAIL_SRT (a test checks). */
export const SRT_BUNDLE_FILE = 'jail-srt.txt';

/** The bundle's first line: `harness-bridge jail-srt <package>@<version> <license>`. */
const header = /^harness-bridge jail-srt @anthropic-ai\/sandbox-runtime@(\S+) /;

export type LoadedSrt = { srt: SrtModule; from: 'bundle' | 'installed'; note?: string };

/** srt from `bundleFile` when it was built from the srt installed at `srtIndex` (its dist/index.js), else that srt itself. */
export async function loadSrt(srtIndex: string, bundleFile: string): Promise<LoadedSrt> {
  const [{ readFileSync }, { dirname, join }, { pathToFileURL }] = await Promise.all([import('node:fs'), import('node:path'), import('node:url')]);
  const installed = async (note?: string): Promise<LoadedSrt> => ({
    srt: (await import(pathToFileURL(srtIndex).href)) as SrtModule,
    from: 'installed',
    ...(note === undefined ? {} : { note }),
  });
  let text: string;
  try {
    text = readFileSync(bundleFile, 'utf8');
  } catch (error) {
    // No bundle beside this bridge is nothing to report; one this uid cannot read is.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? installed() : installed(`${bundleFile} is unreadable (${(error as Error).message})`);
  }
  const pkgDir = dirname(dirname(srtIndex));
  const firstLine = text.slice(0, text.indexOf('\n'));
  const bundled = header.exec(firstLine)?.[1];
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version?: unknown }).version;
  } catch (error) {
    return installed(`the installed sandbox-runtime's package.json is unreadable (${(error as Error).message})`);
  }
  if (bundled === undefined) return installed(`${bundleFile} does not start with a jail-srt header`);
  if (bundled !== version) return installed(`${bundleFile} holds sandbox-runtime ${bundled}; ${String(version)} is installed`);
  try {
    const [{ compileFunction }, { brotliDecompressSync }, { createRequire }] = await Promise.all([import('node:vm'), import('node:zlib'), import('node:module')]);
    const code = brotliDecompressSync(Buffer.from(text.slice(firstLine.length + 1), 'base64')).toString('utf8');
    // The module the bundle stands for: srt resolves its vendored files and optional packages from there.
    const moduleUrl = pathToFileURL(join(pkgDir, 'dist', 'sandbox', 'sandbox-manager.js')).href;
    const module = { exports: {} as Partial<SrtModule> };
    const run = compileFunction(code, ['exports', 'require', 'module', '__hbSrtModuleUrl'], { filename: bundleFile });
    run(module.exports, createRequire(moduleUrl), module, moduleUrl);
    if (typeof module.exports.SandboxManager?.wrapWithSandbox !== 'function') return installed(`${bundleFile} exports no SandboxManager`);
    return { srt: module.exports as SrtModule, from: 'bundle' };
  } catch (error) {
    return installed(`${bundleFile} did not load (${(error as Error).message})`);
  }
}
