/**
 * Benchmark: the embedded API server with 10,000 pods.
 *
 * Run:  node --import tsx bench/apiserver-list-watch.ts [pods=10000] [concurrency=32]
 *
 * Prints (figures only, no assertions):
 * - create: N pods over HTTPS (keep-alive, `concurrency` requests in flight): total ms and pods/s;
 * - list: one unpaginated list of all pods: ms, response MiB, and the heap the
 *   server holds for the stored pods (MiB, and KiB per pod);
 * - list paginated: the same list in pages of 500, as informers do;
 * - watch from 0: a watch without resourceVersion until the N-th ADDED event: ms.
 * The server runs on the real clock in this process; the heap figure is
 * `heapUsed` after a forced GC when node runs with --expose-gc.
 */
import { Agent, request } from 'node:https';
import { realClock } from '../src/clock/clock.ts';
import { startApiServer, type ApiServer } from '../src/cluster/apiserver/server.ts';

const N = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = Number(process.argv[3] ?? 32);
const MiB = 1024 * 1024;

function gc(): void {
  const maybe = (globalThis as { gc?: () => void }).gc;
  if (maybe !== undefined) maybe();
}

function call(server: ApiServer, agent: Agent, method: string, path: string, body?: string): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${server.token}` };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const req = request({ host: server.host, port: server.port, method, path, ca: server.caPem, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: buf.length, text: buf.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function podBody(i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, labels: { app: 'bench', shard: String(i % 10) }, annotations: { 'bench/index': String(i) } },
    spec: { nodeName: `node-${i % 100}`, containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  });
}

async function main(): Promise<void> {
  const clock = realClock();
  const server = await startApiServer({ clock });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  gc();
  const heapBefore = process.memoryUsage().heapUsed;

  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < N; i = next++) {
        const r = await call(server, agent, 'POST', '/api/v1/namespaces/default/pods', podBody(i));
        if (r.status !== 201) throw new Error(`create pod-${i}: ${r.status} ${r.text}`);
      }
    }),
  );
  const createMs = performance.now() - t0;
  console.log(`create  ${N} pods: ${createMs.toFixed(0)} ms (${((N / createMs) * 1000).toFixed(0)} pods/s, concurrency ${CONCURRENCY})`);

  gc();
  const heapStored = process.memoryUsage().heapUsed - heapBefore;
  const t1 = performance.now();
  const list = await call(server, agent, 'GET', '/api/v1/namespaces/default/pods');
  const listMs = performance.now() - t1;
  const items = (JSON.parse(list.text) as { items: unknown[] }).items.length;
  console.log(`list    ${items} pods: ${listMs.toFixed(0)} ms, response ${(list.bytes / MiB).toFixed(1)} MiB`);
  const t1b = performance.now();
  const again = await call(server, agent, 'GET', '/api/v1/namespaces/default/pods');
  console.log(`list    again (serialization cached): ${(performance.now() - t1b).toFixed(0)} ms, ${(again.bytes / MiB).toFixed(1)} MiB`);
  gc();
  const heapAfterList = process.memoryUsage().heapUsed - heapBefore;
  console.log(`heap    stored pods: ${(heapStored / MiB).toFixed(1)} MiB (${(heapStored / 1024 / N).toFixed(2)} KiB/pod); after listing (JSON cached): ${(heapAfterList / MiB).toFixed(1)} MiB`);

  const t2 = performance.now();
  let cont = '';
  let pages = 0;
  let seen = 0;
  do {
    const r = await call(server, agent, 'GET', `/api/v1/namespaces/default/pods?limit=500${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
    const page = JSON.parse(r.text) as { items: unknown[]; metadata: { continue?: string } };
    seen += page.items.length;
    cont = page.metadata.continue ?? '';
    pages++;
  } while (cont !== '');
  console.log(`list    paginated (limit 500): ${pages} pages, ${seen} pods, ${(performance.now() - t2).toFixed(0)} ms`);

  const t3 = performance.now();
  const watched = await new Promise<number>((resolve, reject) => {
    const req = request(
      { host: server.host, port: server.port, method: 'GET', path: '/api/v1/namespaces/default/pods?watch=true', ca: server.caPem, headers: { Authorization: `Bearer ${server.token}` } },
      (res) => {
        let count = 0;
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            buf = buf.slice(i + 1);
            if (++count === N) {
              req.destroy();
              resolve(count);
            }
          }
        });
        res.on('error', () => {});
      },
    );
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
  console.log(`watch   from 0: ${watched} ADDED events in ${(performance.now() - t3).toFixed(0)} ms`);

  agent.destroy();
  await server.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
