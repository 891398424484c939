/**
 * Applying and checking the `~ configuration` change: the server's one configuration is read
 * again before it is written (a hand change since the plan is not overwritten), written with
 * PATCH (only the planned fields), and the answer must hold what was asked.
 */
import type { ApiClient } from '../client/index.js';
import type { ApiConfiguration } from '../model/configuration.js';
import { sameConfigurationValue } from '../plan/configuration.js';
import { fingerprintOf } from '../plan/fingerprint.js';
import type { Change } from '../plan/types.js';

/** Performs the change; throws an Error whose message says why it failed. */
export async function applyConfigurationChange(change: Change, client: ApiClient): Promise<undefined> {
  const current = await client.getConfiguration();
  if (change.fingerprint && fingerprintOf('configuration', current) !== change.fingerprint) {
    throw new Error('changed by someone else since the plan was made; not overwritten (run plan again)');
  }
  const body = change.body ?? {};
  const answer = await client.updateConfiguration(body);
  const differing = Object.keys(body).filter(
    (field) => !sameConfigurationValue(field, body[field], answer[field as keyof ApiConfiguration]),
  );
  if (differing.length > 0) {
    throw new Error(`the server's answer does not hold what was asked for ${differing.join(', ')}`);
  }
  return undefined;
}

/** Why a saved plan's configuration change no longer holds (empty when it does). */
export function staleConfiguration(change: Change, live: ApiConfiguration | undefined): string[] {
  if (!live) return ['configuration: the server no longer answers /v0/configuration'];
  if (fingerprintOf('configuration', live) === change.fingerprint) return [];
  return ['configuration: changed since the plan was made'];
}
