/**
 * The spawner (test/helpers/spawner.ts): a small Node process that starts processes for the test
 * process and relays their output, exit and the signals sent to them over its IPC channel. Forking
 * a process costs the parent in proportion to its memory: from the test worker (hundreds of MB)
 * each spawn blocks its event loop for tens of milliseconds of CPU; from this process, a few.
 * When the test process goes away (the channel closes), its processes are killed and it exits.
 */
import { spawn } from 'node:child_process';

const children = new Map();

const send = (message) => {
  if (process.connected) process.send(message);
};

process.on('message', (message) => {
  if (message.op === 'spawn') {
    const { id, file, args, cwd, env, input } = message;
    let child;
    try {
      child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      send({ op: 'error', id, message: String(error?.message ?? error) });
      return;
    }
    children.set(id, child);
    child.on('error', (error) => send({ op: 'error', id, message: String(error?.message ?? error) }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    for (const stream of ['stdout', 'stderr'])
      child[stream].setEncoding('utf8').on('data', (chunk) => send({ op: 'data', id, stream, chunk }));
    child.once('close', (code, signal) => {
      children.delete(id);
      send({ op: 'close', id, code, signal });
    });
    send({ op: 'spawned', id, pid: child.pid });
  } else if (message.op === 'kill') {
    const child = children.get(message.id);
    if (child && child.exitCode === null && child.signalCode === null) child.kill(message.signal);
  } else if (message.op === 'exit') {
    process.disconnect();
  }
});

process.on('disconnect', () => {
  for (const child of children.values()) child.kill('SIGKILL');
  // Exits once the killed processes are gone (nothing else holds the event loop).
});
