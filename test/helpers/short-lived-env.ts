/**
 * SHORT_LIVED_NODE (test/helpers/cli.ts: V8's optimizing compiler off) for node processes started
 * by a script or a bin rather than by the test: NODE_OPTIONS, which every node process under it
 * inherits, preloads test/helpers/short-lived-preload.mjs. For the processes the package and the
 * Action's tests run through bash, npx or the installed bin.
 *
 *   spawn('bash', [script], { env: { ...process.env, NODE_OPTIONS: shortLivedNodeOptions(process.env.NODE_OPTIONS) } });
 */
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./short-lived-preload.mjs', import.meta.url));

/** NODE_OPTIONS with the short-lived preload after `existing` (the environment's own, if any). */
export function shortLivedNodeOptions(existing: string | undefined = undefined): string {
  const preload = `--import=${JSON.stringify(PRELOAD)}`;
  return existing?.trim() ? `${existing.trim()} ${preload}` : preload;
}
