#!/usr/bin/env node
/**
 * The bench fleet served and written once, kept up until killed: for profiling one `plan` by hand.
 *
 *   node bench/plan-fixture.mjs DIR [--light]
 *
 * Seeds DIR/fleet.db as bench/plan-layouts.mjs does, writes DIR/netform.yaml and DIR/env.sh
 * (NETFORM_URL, NETFORM_TOKEN, NETFORM_TOKEN_USER), starts the server in this process and prints
 * "ready" when a `plan -f DIR/netform.yaml` can be run against it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startServer } from '../dist/server/index.js';
import { desiredYaml, model, prepareDatabase, seed } from './scale-data.mjs';

const dir = resolve(process.argv[2] ?? 'plan-fixture');
mkdirSync(dir, { recursive: true });
const dbPath = join(dir, 'fleet.db');
const token = await prepareDatabase(dbPath);
const m = model({ light: process.argv.includes('--light') });
await seed(dbPath, m);
writeFileSync(join(dir, 'netform.yaml'), desiredYaml(m).text);
const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
writeFileSync(
  join(dir, 'env.sh'),
  `export NETFORM_URL=${server.url} NETFORM_TOKEN=${token} NETFORM_TOKEN_USER=admin@example.com\n`,
  { mode: 0o600 },
);
console.log('ready');
