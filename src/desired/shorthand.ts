/** The device shorthand users expect from every front end. */
import { withImpliedFlags } from '../model/device-fields.js';
import type { DesiredDeviceFields } from '../model/state.js';

/**
 * Giving `<x>` (allowed_ips, dns, endpoint, mtu, persistent_keepalive) means the device does not
 * use the server's default for it: its default flag becomes false unless the declaration states
 * it. A stated `true` is kept, so that the contradiction is reported rather than hidden. The rule
 * is the device-field table's (model/device-fields.ts).
 */
export function applyUseDefaultShorthand(fields: DesiredDeviceFields): DesiredDeviceFields {
  return withImpliedFlags(fields);
}
