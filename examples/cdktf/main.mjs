// @ts-check
/**
 * Example Corp (the same company as examples/basic/netform.yaml) as a CDK for Terraform stack.
 *
 *   node examples/cdktf/main.mjs [OUTDIR]     # default: examples/cdktf/cdktf.out
 *
 * writes OUTDIR/stacks/example-corp/cdk.tf.json, which netform reads like a YAML file:
 *
 *   netform plan -f examples/cdktf/cdktf.out/stacks/example-corp
 *
 * Secrets are sensitive Terraform variables, never values in this file or in the stack:
 * netform (like Terraform) reads them from TF_VAR_alice_password, TF_VAR_bob_password,
 * TF_VAR_alice_laptop_psk and TF_VAR_carol_laptop_psk.
 *
 * Needs cdktf and constructs, optional peer dependencies of netform (devDependencies of this
 * checkout): in a project of your own, `npm install cdktf@0.21 constructs@10` beside netform.
 */
import { App } from 'cdktf';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FirezoneStack } from 'netform/cdktf';

const outdir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'cdktf.out');
const app = new App({ outdir });

new FirezoneStack(app, 'example-corp', {
  settings: {
    prune: false, // only touch what is declared here, or listed under absent
    manage: {
      users: ['*@example.com'], // people of other domains on the same server are left alone
      rules: ['10.0.0.0/8'], // global rules for our private network only
    },
    protect: { users: ['alice@example.com'] }, // never deleted or demoted, whatever this stack says
    limits: { delete: '10%', update: '30%' },
  },

  users: [
    {
      email: 'alice@example.com',
      role: 'admin',
      password: { variable: 'alice_password' },
      devices: [
        {
          name: 'laptop',
          description: "Alice's work laptop",
          publicKey: 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=',
          presharedKey: { variable: 'alice_laptop_psk' },
          allowedIps: ['10.0.0.0/8'], // only the company network through the tunnel
          mtu: 1380,
        },
        { name: 'phone', publicKey: 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=' },
      ],
    },
    {
      email: 'bob@example.com',
      role: 'admin',
      password: { variable: 'bob_password' },
      devices: [
        {
          name: 'laptop',
          publicKey: 'rB2btKmCw+NpDBh32arkyv470HsMRpDan/kPl7FDczk=',
          dns: ['10.0.0.53', '1.1.1.1'],
          endpoint: 'vpn.example.com:51820',
          persistentKeepalive: 15,
        },
      ],
    },
    {
      email: 'carol@example.com',
      role: 'unprivileged',
      devices: [
        {
          name: 'laptop',
          publicKey: 'wO3cJvfdtzNtsv2OpfkaNbfCQ+6DsBbWQKfrJOvAyVs=',
          presharedKey: { variable: 'carol_laptop_psk' },
        },
        {
          name: 'phone',
          publicKey: 'IsOdUVXCBDA33YME2lmALQSSj9X0+EL0NpRhg21wgHg=',
          useDefaultPersistentKeepalive: false,
          persistentKeepalive: 0,
        },
      ],
      rules: [
        { action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '443' },
        { action: 'accept', destination: '10.1.2.0/24', portType: 'tcp', portRange: '5432' },
      ],
    },
    {
      email: 'dave@example.com', // role left out: unprivileged (managed)
      devices: [{ name: 'desktop', publicKey: 'ZMgfn3LCKsNBVSHzB3Sg0Kq/msnUHlo1PMfkQJEre14=', ipv4: '10.3.2.20' }],
    },
    {
      email: 'erin@example.com',
      role: 'unprivileged',
      rules: [
        { action: 'accept', destination: '10.1.0.53', portType: 'udp', portRange: '53' },
        { action: 'drop', destination: '10.1.0.0/16', portType: 'tcp', portRange: '8000-8999' },
      ],
    },
  ],

  rules: [
    // bound to no user
    { action: 'drop', destination: '10.9.0.0/16' },
    { action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '443' },
    { action: 'drop', destination: '10.10.0.0/16', portType: 'tcp', portRange: '22' },
  ],

  absent: {
    // deleted even though prune is off
    users: ['mallory@example.com'],
    devices: [{ user: 'bob@example.com', name: 'old-phone' }],
  },
});

app.synth();
process.stdout.write(`synthesized ${join(outdir, 'stacks', 'example-corp', 'cdk.tf.json')}\n`);
