/**
 * A loopback TCP proxy in front of a test server that can hold back the server's answers until
 * the test releases them: a run that stays in progress exactly as long as the test says, with no
 * timer (tcp-proxy.ts's setDelay holds them for real milliseconds).
 */
import { EventEmitter } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface HoldingProxy {
  url: string;
  /** From now on, what the server sends is kept back. */
  hold(): void;
  /** Sends what was kept back, in order, and stops holding. */
  release(): void;
  /** Emits `request` whenever a client sends data. */
  events: EventEmitter;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  let held: (() => void)[] | null = null;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const later = (step: () => void) => (held ? held.push(step) : step());
  const server = createServer((client) => {
    track(client);
    const remote = connect({ host: upstream.hostname, port: Number(upstream.port) });
    track(remote);
    client.on('data', (chunk) => {
      events.emit('request');
      remote.write(chunk);
    });
    remote.on('data', (chunk) => later(() => client.destroyed || client.write(chunk)));
    // The end of the server's answer must not overtake its held data.
    remote.on('close', () => later(() => client.destroy()));
    client.on('close', () => remote.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hold() {
      held ??= [];
    },
    release() {
      const steps = held ?? [];
      held = null;
      for (const step of steps) step();
    },
    events,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
