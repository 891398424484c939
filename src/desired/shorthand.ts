/** The device shorthand users expect from every front end. */
import type { DesiredDeviceFields } from '../model/state.js';
import { DEFAULTABLE_DEVICE_FIELDS } from '../model/types.js';

/**
 * Giving `<x>` (allowed_ips, dns, endpoint, mtu, persistent_keepalive) means the device does not
 * use the server's default for it: `use_default_<x>` becomes false unless the declaration states
 * it. A stated `true` is kept, so that the contradiction is reported rather than hidden.
 */
export function applyUseDefaultShorthand(fields: DesiredDeviceFields): DesiredDeviceFields {
  const result: DesiredDeviceFields = { ...fields };
  for (const field of DEFAULTABLE_DEVICE_FIELDS) {
    const flag = `use_default_${field}` as const;
    if (result[field] !== undefined && result[flag] === undefined) result[flag] = false;
  }
  return result;
}
