/** The /v0 client: typed calls, retries, typed errors, and reading the whole live state. */
import type { ApiConfiguration } from '../model/configuration.js';
import type { LiveState } from '../model/state.js';
import type { ApiClient } from './client.js';
import { ApiError } from './errors.js';

export { ApiClient, type ApiClientOptions } from './client.js';
export { ApiError, plainDescription, type ApiErrorFacts, type DescribeApiError } from './errors.js';
export type { ResourceName } from './resources.js';

export interface FetchOptions {
  /**
   * Also read `/v0/configuration`: `'required'` (the desired state declares `configuration:`;
   * a server without it is an error saying so), `'optional'` (export: left out when the server
   * has none), or false (default: never asked for).
   */
  configuration?: 'required' | 'optional' | false;
}

/** The three collections, one list call each, in parallel (never one GET per object); and the configuration when asked. */
export async function fetchLiveState(client: ApiClient, options: FetchOptions = {}): Promise<LiveState> {
  const [users, devices, rules, configuration] = await Promise.all([
    client.list('users'),
    client.list('devices'),
    client.list('rules'),
    options.configuration ? fetchConfiguration(client, options.configuration) : undefined,
  ]);
  return configuration ? { users, devices, rules, configuration } : { users, devices, rules };
}

/** `/v0/configuration` as fetchLiveState reads it (also for a plan that read the lists before knowing it was wanted). */
export async function fetchConfiguration(
  client: ApiClient,
  mode: 'required' | 'optional',
): Promise<ApiConfiguration | undefined> {
  try {
    return await client.getConfiguration();
  } catch (error) {
    if (!(error instanceof ApiError && error.isNotFound)) throw error;
    if (mode === 'optional') return undefined;
    throw new ApiError(error.method, error.path, 404, {}, '', { answer: { code: 'no_configuration' } }, error.describe);
  }
}
