/**
 * A desired state read again and again (a scheduled drift check every minute) is read once while
 * nothing it came from changes: the YAML files (their names and contents), and the secrets it
 * resolved (files and environment variables, whose values go into a digest only). Anything else
 * (a CDKTF stack, stdin, a load with errors) is read afresh every time.
 */
import { createHash } from 'node:crypto';
import type { DesiredState } from '../model/state.js';
import type { Secret } from '../model/secret.js';
import { loadDesiredState, yamlInputsDigest } from './index.js';
import { resolveSecret, SecretResolutionError, type Environment } from './secrets.js';
import type { LoadOptions, LoadResult } from './types.js';

function secretsOf(state: DesiredState): Secret[] {
  const secrets: Secret[] = [];
  for (const user of state.users) {
    if (user.password) secrets.push(user.password);
    for (const device of user.devices) if (device.preshared_key) secrets.push(device.preshared_key);
  }
  return secrets;
}

/** A digest of what the state's secrets resolve to now; null when one cannot be read any more. */
function secretsDigest(state: DesiredState, env: Environment): string | null {
  const hash = createHash('sha256');
  for (const secret of secretsOf(state)) {
    try {
      hash.update(resolveSecret(secret.ref, env)).update('\0');
    } catch (error) {
      if (error instanceof SecretResolutionError) return null;
      throw error;
    }
  }
  return hash.digest('hex');
}

export class DesiredStateReuse {
  #kept: { path: string; inputs: string; secrets: string; result: LoadResult } | null = null;
  /** How many loads were answered with the kept state (for tests and logs). */
  reused = 0;

  async load(path: string, options: LoadOptions = {}): Promise<LoadResult> {
    const env = options.env ?? process.env;
    const inputs = await yamlInputsDigest(path);
    const kept = this.#kept;
    if (inputs !== null && kept && kept.path === path && kept.inputs === inputs && kept.result.ok) {
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
    if (secrets !== null) this.#kept = { path, inputs, secrets, result };
    return result;
  }
}
