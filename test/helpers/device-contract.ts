/**
 * The keys of a device answer, in the order docs/api-v0.md section 5 writes them (and answers carry
 * them). Written out here, not derived from src/model, so that tests pin the contract itself.
 */
export const DEVICE_CONTRACT_KEYS: readonly string[] = [
  'id',
  'user_id',
  'name',
  'description',
  'public_key',
  'preshared_key',
  'server_public_key',
  'ipv4',
  'ipv6',
  'allowed_ips',
  'dns',
  'endpoint',
  'mtu',
  'persistent_keepalive',
  'use_default_allowed_ips',
  'use_default_dns',
  'use_default_endpoint',
  'use_default_mtu',
  'use_default_persistent_keepalive',
  'remote_ip',
  'latest_handshake',
  'rx_bytes',
  'tx_bytes',
  'inserted_at',
  'updated_at',
];
