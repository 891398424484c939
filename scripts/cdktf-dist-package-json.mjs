#!/usr/bin/env node
/**
 * Puts the {"type":"commonjs"} marker of src/cdktf/generated/ into dist/ as well: tsc emits the
 * generated bindings as CommonJS but does not copy package.json files, and without the marker Node
 * would load them as ES modules (our package is "type": "module"). Runs before tsc in `npm run
 * build`, since it needs nothing tsc produces.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src', 'cdktf', 'generated', 'package.json');
const to = join(root, 'dist', 'src', 'cdktf', 'generated', 'package.json');
await mkdir(dirname(to), { recursive: true });
await copyFile(from, to);
