/**
 * A loopback HTTP proxy that stands in for a hostile or intercepted `/v0` server: it forwards
 * every request to a real server and lets a test rewrite the JSON of each answer (the way the
 * security review's reproductions did, with a proxy in front of `netform serve`).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RewritingProxy {
  url: string;
  close(): Promise<void>;
}

/** `rewrite(path, body)` returns the body to send instead (it may change `body` in place and return it). */
export type Rewrite = (path: string, body: any) => any;

export async function startRewritingProxy(target: string, rewrite: Rewrite): Promise<RewritingProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const forward = request(
        {
          host: upstream.hostname,
          port: Number(upstream.port),
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            if (/json/.test(String(answer.headers['content-type'] ?? '')) && text !== '')
              text = JSON.stringify(rewrite(req.url ?? '', JSON.parse(text)));
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
