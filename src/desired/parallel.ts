/**
 * Many desired-state files read at once: a small pool of worker threads parses each file and reads
 * its documents (src/desired/load-worker.ts), and hands back plain data, which the main thread
 * merges and checks as one state (src/desired/pipeline.ts, finishReading). The result and every
 * diagnostic are the same as on one thread, in the same order: each file's part is put back in
 * reading order before anything is merged.
 *
 * Workers cost a thread start and their own imports (tens of milliseconds), so they are used only
 * for several files holding enough to read (PARALLEL_MIN_BYTES); a small repository, `validate` of
 * one file and one large file read on the main thread as before (bench/plan-layouts.mjs).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { takeOver, type HandedDeclarations } from './document.js';
import type { DocumentRead } from './pipeline.js';
import type { Environment } from './secrets.js';
import type { Diagnostic } from './types.js';

/** Below this many bytes in all the files, a worker's start costs more than it saves. */
export const PARALLEL_MIN_BYTES = 512 * 1024;

/** One document's read as a worker hands it over (its locations as plain data: handOver). */
export interface HandedRead {
  diagnostics: Diagnostic[];
  warnings: Diagnostic[];
  declarations?: HandedDeclarations;
}

/** One file's part: its syntax problems, and the reads of its documents in order. */
export interface FileRead {
  parseDiagnostics: Diagnostic[];
  reads: HandedRead[];
}

/** One file's part as this thread uses it. */
export interface FilePart {
  parseDiagnostics: Diagnostic[];
  reads: DocumentRead[];
}

/** A request to a worker, and its answer (either the file's part or an unexpected error). */
export interface FileJob {
  index: number;
  text: string;
  file: string;
}
export type FileAnswer = { index: number; read: FileRead } | { index: number; error: Error };

/** How many workers: one per core, never more than there are files; 0 (this thread) below the threshold. */
export function workersFor(files: number, bytes: number, requested?: number): number {
  if (requested !== undefined) return Math.min(requested, files);
  if (files < 2 || bytes < PARALLEL_MIN_BYTES) return 0;
  return Math.min(availableParallelism(), files);
}

/**
 * Reads `texts` (with their shown names `files`) in `count` workers; the answers in file order.
 * A worker that fails unexpectedly fails the load with its own error (message and stack, as a
 * failure on this thread would be reported); the other workers are stopped.
 */
export async function readFilesInWorkers(
  texts: string[],
  files: string[],
  env: Environment,
  count: number,
): Promise<FilePart[]> {
  const results: FilePart[] = new Array<FilePart>(texts.length);
  let next = 0;
  const workers: Worker[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let pending = texts.length;
      const give = (worker: Worker): void => {
        if (next >= texts.length) return;
        const index = next++;
        const job: FileJob = { index, text: texts[index]!, file: files[index]! };
        // Each text goes once: let it go here as soon as it is sent.
        texts[index] = '';
        worker.postMessage(job);
      };
      for (let i = 0; i < count; i++) {
        // The environment goes to the worker for `{ env: NAME }` secrets, which are looked up there
        // (to warn of one that cannot be read), never printed.
        const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
          workerData: { env: { ...env } },
          stdout: false,
          stderr: false,
        });
        workers.push(worker);
        worker.on('message', (answer: FileAnswer) => {
          if ('error' in answer) return reject(answer.error);
          results[answer.index] = takeOverFile(answer.read, env);
          if (--pending === 0) resolve();
          else give(worker);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (code !== 0 && pending > 0) reject(new Error(`a desired-state reader thread stopped (exit code ${code})`));
        });
        give(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}

/** A file's part with its declarations' locations made again on this thread. */
function takeOverFile({ parseDiagnostics, reads }: FileRead, env: Environment): FilePart {
  return {
    parseDiagnostics,
    reads: reads.map(({ diagnostics, warnings, declarations }) => ({
      diagnostics,
      warnings,
      ...(declarations ? { declarations: takeOver(declarations, env) } : {}),
    })),
  };
}
