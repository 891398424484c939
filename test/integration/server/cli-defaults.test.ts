/** `netform server defaults ...` on database files, through the real CLI. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AdminError, setServerDefault, showDefaults } from '../../../server/index.js';
import { runCli } from '../../helpers/cli.js';
import { startTestServer } from '../../helpers/server.js';
import { useDatabaseFiles } from '../../helpers/database-files.js';

const { createdDb, servers } = useDatabaseFiles();

describe('netform server defaults', () => {
  it('shows the defaults of docs/api-v0.md section 5 on a new database', async () => {
    const res = await runCli(['server', 'defaults', 'show', '--json', '--db', await createdDb()]);
    expect(res.code).toBe(0);
    const values = JSON.parse(res.stdout);
    expect(values).toMatchObject({
      allowed_ips: ['0.0.0.0/0', '::/0'],
      dns: ['1.1.1.1', '1.0.0.1'],
      mtu: 1280,
      persistent_keepalive: 25,
      ipv4_network: '10.3.2.0/24',
      ipv4_address: '10.3.2.1',
      ipv6_network: 'fd00::3:2:0/120',
      ipv6_address: 'fd00::3:2:1',
      max_devices_per_user: 10,
    });
    expect(values.endpoint).toMatch(/:51820$/);
    expect(values.server_public_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(JSON.stringify(values)).not.toContain('private');
    const text = await runCli(['server', 'defaults', 'show', '--db', await createdDb()]);
    expect(text.stdout).toMatch(/^allowed_ips\s+0\.0\.0\.0\/0, ::\/0$/m);
  });

  it('set changes what a running server answers at once', async () => {
    const server = await startTestServer();
    servers.push(server);
    const admin = (await server.api('GET', '/v0/users/admin@example.com')).body.data;
    const device = (
      await server.api('POST', '/v0/devices', {
        device: { user_id: admin.id, public_key: randomBytes(32).toString('base64') },
      })
    ).body.data;
    for (const [key, value] of [
      ['mtu', '1420'],
      ['allowed_ips', '10.0.0.0/8, 192.168.0.0/16'],
      ['persistent_keepalive', '0'],
      ['endpoint', '[2001:db8::1]:51820'],
      ['dns', ''],
    ]) {
      const res = await runCli(['server', 'defaults', 'set', key!, value!, '--db', server.dbPath]);
      expect(res.code, `${key} ${value}`).toBe(0);
    }
    expect((await server.api('GET', `/v0/devices/${device.id}`)).body.data).toMatchObject({
      mtu: 1420,
      allowed_ips: ['10.0.0.0/8', '192.168.0.0/16'],
      persistent_keepalive: 0,
      endpoint: '[2001:db8::1]:51820',
      dns: [],
    });
  });

  it('a new tunnel network moves the server address into it; devices get addresses there', async () => {
    const server = await startTestServer();
    servers.push(server);
    const res = await runCli(['server', 'defaults', 'set', 'ipv4_network', '172.16.0.0/12', '--db', server.dbPath]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('ipv4_address set to 172.16.0.1');
    const admin = (await server.api('GET', '/v0/users/admin@example.com')).body.data;
    const device = (
      await server.api('POST', '/v0/devices', {
        device: { user_id: admin.id, public_key: randomBytes(32).toString('base64') },
      })
    ).body.data;
    expect(device.ipv4).toBe('172.16.0.2');
    expect(
      (await runCli(['server', 'defaults', 'set', 'ipv4_address', '172.16.0.9', '--db', server.dbPath])).code,
    ).toBe(0);
    const second = (
      await server.api('POST', '/v0/devices', {
        device: { user_id: admin.id, public_key: randomBytes(32).toString('base64'), ipv4: '172.16.0.9' },
      })
    ).body;
    expect(second).toEqual({ errors: { ipv4: ['is reserved'] } });
  });

  it('set refuses bad keys and values with a clear message, changing nothing', async () => {
    const db = await createdDb();
    const cases: [string[], string][] = [
      [['colour', 'blue'], 'unknown setting "colour"'],
      [['mtu', '2000'], 'mtu must be between 576 and 1500'],
      [['mtu', 'big'], 'mtu must be a whole number'],
      [['allowed_ips', '10.0.0.0/33'], 'allowed_ips: "10.0.0.0/33" is invalid'],
      [['dns', '1.1.1.1,1.1.1.1'], 'dns: "1.1.1.1" is listed twice'],
      [['endpoint', 'host:99999'], 'endpoint must be host'],
      [['ipv4_network', 'fd00::/64'], 'ipv4_network must be an IPv4 CIDR block'],
      [['ipv4_network', '10.0.0.0/31'], 'must leave room for devices'],
      [['ipv4_address', '10.9.9.9'], 'ipv4_address is not in the CIDR 10.3.2.0/24'],
      [['ipv6_address', 'fd00::3:2:0'], 'ipv6_address is the network or broadcast address'],
      [['max_devices_per_user', '-1'], 'max_devices_per_user must be a whole number'],
    ];
    const before = await showDefaults({ dbPath: db });
    for (const [args, message] of cases) {
      const res = await runCli(['server', 'defaults', 'set', ...args, '--db', db]);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toContain(message);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await showDefaults({ dbPath: db })).toEqual(before);
  });

  it('a tunnel network must hold addresses devices can have: a /0, loopback, multicast and the like are refused', async () => {
    const dbPath = await createdDb();
    const before = await showDefaults({ dbPath });
    const refused: [string, string, string][] = [
      [
        'ipv4_network',
        '0.0.0.0/0',
        'ipv4_network 0.0.0.0/0 is every IPv4 address, where devices cannot have addresses',
      ],
      ['ipv4_network', '10.8.0.0/0', 'ipv4_network 0.0.0.0/0 is every IPv4 address'],
      ['ipv4_network', '224.0.0.0/29', 'ipv4_network 224.0.0.0/29 overlaps 224.0.0.0/4 (multicast)'],
      ['ipv4_network', '0.0.0.0/24', 'overlaps 0.0.0.0/8 ("this network")'],
      ['ipv4_network', '128.0.0.0/1', 'overlaps 224.0.0.0/4 (multicast)'],
      ['ipv4_network', '255.255.255.0/24', 'overlaps 240.0.0.0/4 (reserved and broadcast)'],
      ['ipv6_network', '::/0', 'ipv6_network ::/0 is every IPv6 address'],
      ['ipv6_network', '::/120', 'overlaps ::/128 (the unspecified address)'],
      ['ipv6_network', '::1/126', 'ipv6_network ::/126 overlaps ::/128 (the unspecified address)'],
      ['ipv6_network', 'ff02::/120', 'overlaps ff00::/8 (multicast)'],
      ['ipv6_network', '::ffff:10.0.0.0/120', 'overlaps ::ffff:0:0/96 (IPv4-mapped)'],
    ];
    for (const [key, value, message] of refused) {
      const error = await setServerDefault({ dbPath, key, value }).catch((e: unknown) => e);
      expect(error, `${key} ${value}`).toBeInstanceOf(AdminError);
      expect((error as Error).message, `${key} ${value}`).toContain(message);
    }
    // Through the command line: one line, exit 1.
    const res = await runCli(['server', 'defaults', 'set', 'ipv4_network', '127.0.0.0/29', '--db', dbPath]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      'error: ipv4_network 127.0.0.0/29 overlaps 127.0.0.0/8 (loopback), where devices cannot have addresses; ' +
        'choose a private block such as 10.8.0.0/16\n',
    );
    expect(await showDefaults({ dbPath })).toEqual(before);
    // Next to those blocks is fine.
    for (const [key, value] of [
      ['ipv4_network', '1.0.0.0/24'],
      ['ipv4_network', '126.255.255.0/24'],
      ['ipv4_network', '223.255.255.0/24'],
      ['ipv4_network', '100.64.0.0/10'],
      ['ipv6_network', 'fe80::/64'],
      ['ipv6_network', 'fd00::/112'],
    ]) {
      expect((await setServerDefault({ dbPath, key: key!, value: value! })).value, `${key} ${value}`).toBe(value);
    }
  });
});
