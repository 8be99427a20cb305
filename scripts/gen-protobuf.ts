/**
 * Writes src/cluster/apiserver/protobuf/messages.generated.ts: field numbers,
 * names and types of the Kubernetes API messages the embedded API server
 * decodes from protobuf bodies, read from the descriptors a kubectl binary
 * embeds (no network, no .proto files needed).
 * Usage: `npx tsx scripts/gen-protobuf.ts [path to a kubectl 1.32 binary]`
 * (default: the `kubectl` on PATH, following symlinks; for the gcloud
 * dispatcher pass its versioned binary, e.g. .../bin/kubectl.1.32).
 */
import { realpathSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { messageTable, PROTO_ROOTS, readDescriptors } from '../src/cluster/apiserver/protobuf/descriptors.ts';

const binary = process.argv[2] ?? realpathSync(execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim());
const target = new URL('../src/cluster/apiserver/protobuf/messages.generated.ts', import.meta.url).pathname;
writeFileSync(target, messageTable(readDescriptors(binary), PROTO_ROOTS));
console.log(`wrote src/cluster/apiserver/protobuf/messages.generated.ts from ${binary}`);
