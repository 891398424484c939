/**
 * The notes of device changes that keep or change a device's keys and addresses: a rename, a
 * replacement, a device moved to another user. Each says what apply does to the tunnel, from the
 * fields the change actually sends (docs/netform.md, "Reading a plan"), never more than that.
 */

/** What of a device's identity a change touches: its public key, its addresses, its preshared key. */
export interface DeviceIdentity {
  publicKey: boolean;
  addresses: boolean;
  presharedKey: boolean;
}

/** Which identity fields a list of changed fields touches. */
function identityChanged(fields: Iterable<string>): DeviceIdentity {
  const set = new Set(fields);
  return {
    publicKey: set.has('public_key'),
    addresses: set.has('ipv4') || set.has('ipv6'),
    presharedKey: set.has('preshared_key'),
  };
}

function list(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/**
 * `its public key changes: a tunnel set up with the old key stops working until the client uses
 * the new one; addresses and preshared key stay`, or `keys, addresses and preshared key stay`.
 */
export function identityWords(changed: DeviceIdentity): string {
  const changes: string[] = [];
  const stays: string[] = [];
  (changed.publicKey ? changes : stays).push(changed.publicKey ? 'its public key' : 'public key');
  (changed.addresses ? changes : stays).push(changed.addresses ? 'its addresses' : 'addresses');
  (changed.presharedKey ? changes : stays).push(changed.presharedKey ? 'its preshared key' : 'preshared key');
  const parts: string[] = [];
  if (changes.length > 0) {
    const clients = changed.publicKey
      ? ': a tunnel set up with the old public key stops working until its client uses the new one'
      : ': its client needs the new configuration';
    parts.push(`${list(changes)} ${changes.length === 1 ? 'changes' : 'change'}${clients}`);
  }
  if (stays.length > 0) parts.push(`${list(stays)} ${stays.length === 1 ? 'stays' : 'stay'}`);
  return parts.join('; ');
}

function untouched(changed: DeviceIdentity): boolean {
  return !changed.publicKey && !changed.addresses && !changed.presharedKey;
}

/** The note of a device renamed in place (one update of every changed field). */
export function renameNote(from: string, fields: readonly string[]): string {
  const changed = identityChanged(fields);
  const others = fields.filter((f) => f !== 'name');
  const what = `one update of ${list(['its name', ...others])}`;
  return `renamed from ${from}: ${what}; ${untouched(changed) ? 'keys, addresses and preshared key stay' : identityWords(changed)}`;
}

/** The note of a device replaced because the server ignores the changed fields on update. */
export function replaceNote(fields: readonly string[]): string {
  const changed = identityChanged(fields);
  if (untouched(changed))
    return 'replaced (delete, then create with the same keys and addresses): the server ignores these fields on update';
  return `replaced (delete, then create again): the server ignores these fields on update; ${identityWords(changed)}`;
}

/** What a moved device keeps: each true when the new device gets the live device's value. */
export interface MoveKeeps {
  presharedKey: 'kept' | 'new' | 'none';
  addresses: boolean;
}

/**
 * The note of a device moved to another user: the live device holding its public key is deleted,
 * then created for the new owner (the server cannot change a device's user).
 */
export function moveNote(from: string, newOwner: string, keeps: MoveKeeps): string {
  const same = ['public key'];
  if (keeps.presharedKey === 'kept') same.push('preshared key');
  if (keeps.addresses) same.push('addresses');
  const other: string[] = [];
  if (keeps.presharedKey === 'new') other.push('the preshared key the files give');
  if (!keeps.addresses) other.push('the addresses the files give');
  const created = `created for ${newOwner} with the same ${list(same)}${other.length ? ` and ${list(other)}` : ''}`;
  return (
    `moved from ${from} (the live device that holds its public key): deleted, then ${created}; ` +
    `its tunnel is down between the two requests`
  );
}
