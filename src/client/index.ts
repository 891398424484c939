/** The /v0 client: typed calls, retries, typed errors, and reading the whole live state. */
import type { LiveState } from '../model/state.js';
import type { ApiClient } from './client.js';

export { ApiClient, type ApiClientOptions, type CreateResult } from './client.js';
export { ApiError, parseErrorBody } from './errors.js';
export { readDevice, readRule, readUser, WRAPPER, type Resource, type ResourceName } from './resources.js';

/** The three collections, one list call each, in parallel (never one GET per object). */
export async function fetchLiveState(client: ApiClient): Promise<LiveState> {
  const [users, devices, rules] = await Promise.all([client.list('users'), client.list('devices'), client.list('rules')]);
  return { users, devices, rules };
}
