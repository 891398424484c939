/**
 * A desired state read again and again (a scheduled drift check every minute) is read once while
 * nothing it came from changes: the YAML files (their names and contents), and the secrets it
 * resolved (files and environment variables, whose values go into a digest only). Anything else
 * (a CDKTF stack, stdin, a load with errors) is read afresh every time.
 */
import { createHash } from 'node:crypto';
import type { DesiredState } from '../model/state.js';
import { loadDesiredState, yamlInputsDigest } from './index.js';
import { probeSecret, resolveSecret, SecretResolutionError, type Environment } from './secrets.js';
import type { LoadOptions, LoadResult } from './types.js';

/**
 * A digest of the state's secrets as they are now: a preshared key's value (drift compares it),
 * a password's readability only (drift never sends one, so never reads it). Null when a
 * file now breaks a rule: the state is then read afresh, and the rule reported.
 */
function secretsDigest(state: DesiredState, env: Environment): string | null {
  const hash = createHash('sha256');
  try {
    for (const user of state.users) {
      if (user.password) hash.update(`p:${probeSecret(user.password.ref, env) ?? 'readable'}\0`);
      for (const device of user.devices) {
        if (!device.preshared_key) continue;
        const missing = probeSecret(device.preshared_key.ref, env);
        hash.update(`k:${missing ?? `=${resolveSecret(device.preshared_key.ref, env)}`}\0`);
      }
    }
  } catch (error) {
    if (error instanceof SecretResolutionError) return null;
    throw error;
  }
  return hash.digest('hex');
}

export class DesiredStateReuse {
  #kept: { path: string; env: Environment; inputs: string; secrets: string; result: LoadResult } | null = null;
  /** How many loads were answered with the kept state (for tests and logs). */
  reused = 0;

  async load(path: string, options: LoadOptions = {}): Promise<LoadResult> {
    const env = options.env ?? process.env;
    const inputs = await yamlInputsDigest(path);
    const kept = this.#kept;
    if (inputs !== null && kept && kept.path === path && kept.env === env && kept.inputs === inputs && kept.result.ok) {
      if (secretsDigest(kept.result.state, env) === kept.secrets) {
        this.reused += 1;
        return kept.result;
      }
    }
    this.#kept = null;
    const result = await loadDesiredState(path, options);
    if (inputs === null || !result.ok) return result;
    // Should the files change while being read, the digest taken before no longer matches them,
    // so the next load reads them again.
    const secrets = secretsDigest(result.state, env);
    // Its secrets read the environment they were loaded with, when first used: another one is another load.
    if (secrets !== null) this.#kept = { path, env, inputs, secrets, result };
    return result;
  }
}
