/**
 * One Node process from start to exit, as bench/wave4-commands.mjs and bench/scale-curve.mjs
 * measure commands: wall time, CPU time (user + system, its children's too) and peak RSS, from
 * GNU time (/usr/bin/time). Its stdout and stderr go to files, so that a failure can be shown
 * and a command's output read.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * Runs `node ...nodeArgs` in `cwd` with `env` added; resolves { code, wallMs, cpuMs, rssMb,
 * stdout(), stderr() }. `dir` holds the files of its output (overwritten by the next command).
 */
export function measureProcess(nodeArgs, { env = {}, cwd, dir }) {
  const files = {
    out: join(dir, 'last-stdout.txt'),
    err: join(dir, 'last-stderr.txt'),
    time: join(dir, 'last-time.txt'),
  };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      'bash',
      [
        '-c',
        'exec /usr/bin/time -o "$NETFORM_BENCH_TIME" -f "%U %S %M" "$0" "$@" > "$NETFORM_BENCH_OUT" 2> "$NETFORM_BENCH_ERR"',
        process.execPath,
        ...nodeArgs,
      ],
      {
        cwd,
        env: {
          ...process.env,
          ...env,
          NO_COLOR: '1',
          NETFORM_BENCH_OUT: files.out,
          NETFORM_BENCH_ERR: files.err,
          NETFORM_BENCH_TIME: files.time,
        },
        stdio: 'ignore',
      },
    );
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      // GNU time writes "Command exited with non-zero status N" before its figures.
      const last = readFileSync(files.time, 'utf8').trim().split('\n').at(-1);
      const [user, sys, maxKb] = last.split(' ').map(Number);
      resolve({
        code: Number(code),
        wallMs,
        cpuMs: (user + sys) * 1000,
        rssMb: maxKb / 1024,
        stdout: () => readFileSync(files.out, 'utf8'),
        stderr: () => readFileSync(files.err, 'utf8'),
      });
    });
  });
}

/** Throws, with the end of the command's stderr and stdout, unless it exited with one of `codes`. */
export function expectExit(result, codes, what) {
  if (!codes.includes(result.code))
    throw new Error(
      `${what} exited ${result.code} (expected ${codes.join(' or ')}):\n--- stderr:\n${result.stderr().slice(-3000)}\n--- stdout:\n${result.stdout().slice(-1500)}`,
    );
  return result;
}
