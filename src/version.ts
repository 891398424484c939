/**
 * netform's version, read once from its package.json: one folder up from the sources (tests run
 * them), two from the built files (dist/src).
 */
import { createRequire } from 'node:module';

function readVersion(): string {
  const require = createRequire(import.meta.url);
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(path) as { name?: string; version?: string };
      if (pkg.name === 'netform' && pkg.version) return pkg.version;
    } catch {
      // not at this depth
    }
  }
  return '0.0.0';
}

export const NETFORM_VERSION = readVersion();
