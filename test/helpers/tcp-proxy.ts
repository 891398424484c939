/**
 * A loopback TCP proxy in front of a test server: a restarted test server comes back on another
 * port (setTarget), and the proxy can slow every answer down (setDelay).
 */
import { EventEmitter } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  url: string;
  /** Where new connections go (`http://127.0.0.1:PORT`). */
  setTarget(url: string): void;
  /**
   * Holds back everything the server sends this long (per chunk, order kept), so each request
   * takes at least that long, on new and kept-alive connections alike.
   */
  setDelay(ms: number): void;
  /** Emits `request` whenever a client sends data. */
  events: EventEmitter;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  let upstream = new URL(target);
  let delayMs = 0;
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server: Server = createServer((client) => {
    track(client);
    const remote = connect({ host: upstream.hostname, port: Number(upstream.port) });
    track(remote);
    client.on('data', (chunk) => {
      events.emit('request');
      remote.write(chunk);
    });
    remote.on('data', (chunk) => {
      const forward = () => {
        if (!client.destroyed) client.write(chunk);
      };
      if (delayMs > 0) setTimeout(forward, delayMs);
      else forward();
    });
    const closeBoth = () => {
      // The end of the server's answer must not overtake its delayed data.
      setTimeout(() => {
        client.destroy();
        remote.destroy();
      }, delayMs);
    };
    remote.on('close', closeBoth);
    client.on('close', () => remote.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setTarget: (url) => {
      upstream = new URL(url);
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    events,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
