/**
 * `serve` under a real npx (`npx --no-install netform serve`, the built bin linked into a folder's
 * node_modules/.bin as npm links it; no network): npm runs the bin through a shell, which outlives
 * an npx killed with SIGKILL, so netform watches npx itself too. Killed, npx leaves no server
 * behind. Linux only (the parent of a parent is read from /proc).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../../helpers/cli.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-npx-'));
  await writeFile(join(dir, 'package.json'), '{ "name": "gitops-repo", "private": true }\n');
  await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true });
  // The bin as npm links it for an installed package: an executable named netform.
  const bin = join(dir, 'node_modules', '.bin', 'netform');
  await writeFile(bin, `#!/bin/sh\nexec "${process.execPath}" "${builtCli()}" "$@"\n`);
  await chmod(bin, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(existsSync('/proc/self/stat'))('serve under a real npx', () => {
  it('stops when npx is killed', { timeout: 60_000 }, async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
    const npx = spawn(
      'npx',
      ['--no-install', 'netform', 'serve', '--port', '0', '--db', join(dir, 'npx.db'), '--log-level', 'silent'],
      { cwd: dir, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    // The pipes end once every process holding them has exited: npx, the shell, then netform.
    const closed = Promise.all([
      new Promise<void>((resolve) => npx.stdout.on('end', () => resolve())),
      new Promise<void>((resolve) => npx.stderr.on('end', () => resolve())),
    ]);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const check = (chunk: string) => {
          output += chunk;
          const listening = /listening on (http:\/\/\S+)/.exec(output);
          if (listening) resolve(listening[1]!);
        };
        npx.stdout.setEncoding('utf8').on('data', check);
        npx.stderr.setEncoding('utf8').on('data', check);
        npx.once('exit', () => reject(new Error(`npx exited before netform listened:\n${output}`)));
      });
      npx.removeAllListeners('exit');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      npx.kill('SIGKILL');
      await closed;
      expect(output).toMatch(/parent exited: finishing requests/);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      npx.kill('SIGKILL');
    }
  });
});
