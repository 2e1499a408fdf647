// The bridge's version, written once: esbuild replaces __BRIDGE_VERSION__ with
// package.json's version at build time (esbuild.config.mjs `define`). Unbundled
// (tsx, vitest) it is read from package.json next to the sources instead.
import { readFileSync } from 'node:fs';

declare const __BRIDGE_VERSION__: string | undefined;

function versionFromPackageJson(): string {
  try {
    const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string') {
      return parsed.version;
    }
  } catch {
    // no package.json next to the sources (a stray copy): report unknown rather than fail to start
  }
  return '0.0.0-unknown';
}

export const BRIDGE_VERSION: string =
  typeof __BRIDGE_VERSION__ === 'string' ? __BRIDGE_VERSION__ : versionFromPackageJson();
