// Loads node-pty on demand. node-pty is native and optional (docs/design.md#d7): the
// bundle marks it external, and nothing imports it until a launch asks for
// io.mode 'pty'. Owns loading and the "missing" message; spawning a pty and
// reading it is the supervisor's.
import type * as NodePty from 'node-pty';

export type PtyModule = Pick<typeof NodePty, 'spawn'>;
export type PtyProcess = NodePty.IPty;
/** How node-pty is imported; tests inject a failing one to exercise the missing-module path. */
export type PtyImporter = () => Promise<unknown>;

export type PtyLoad = { ok: true; pty: PtyModule } | { ok: false; message: string };

export const importNodePty: PtyImporter = () => import('node-pty');

const cache = new WeakMap<PtyImporter, Promise<PtyLoad>>();

/** Imports node-pty once per importer; a failure is a value (with a message for the host), not a throw. */
export function loadPty(importer: PtyImporter = importNodePty): Promise<PtyLoad> {
  let load = cache.get(importer);
  if (!load) {
    load = importer().then(
      (mod): PtyLoad => {
        const pty = ptyModuleOf(mod);
        return pty ? { ok: true, pty } : { ok: false, message: 'node-pty loaded but has no spawn() export' };
      },
      (err: unknown): PtyLoad => ({
        ok: false,
        message:
          `io.mode 'pty' needs node-pty, which could not be loaded (${(err as Error)?.message ?? String(err)}); ` +
          `install node-pty next to the bridge, or launch with io.mode 'pipes'`,
      }),
    );
    cache.set(importer, load);
  }
  return load;
}

/** node-pty is CommonJS: under ESM import its exports may sit on the namespace or on `default`. */
function ptyModuleOf(mod: unknown): PtyModule | null {
  const candidates = [mod, (mod as { default?: unknown } | null)?.default];
  for (const c of candidates) {
    if (c && typeof (c as PtyModule).spawn === 'function') return c as PtyModule;
  }
  return null;
}
