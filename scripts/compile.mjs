#!/usr/bin/env node
/**
 * The compiler step of `npm run build`: tsc -p tsconfig.json, which type-checks src/ and server/
 * and writes dist/. With NETFORM_BUILD_CHECK=0 it writes the same files without type-checking
 * (tsc --noCheck): `.ci/run` sets it for the build that `npm ci` runs (`prepare`), because
 * `npm run lint` type-checks the same sources, with the tests, right after (tsconfig.test.json).
 * One type-check per CI run instead of two; a type error still fails CI, through lint.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
const check = process.env.NETFORM_BUILD_CHECK !== '0';
const { status, error } = spawnSync(process.execPath, [tsc, '-p', project, ...(check ? [] : ['--noCheck'])], {
  stdio: 'inherit',
});
if (error) throw error;
process.exit(status ?? 1);
