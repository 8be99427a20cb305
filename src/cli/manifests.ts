/**
 * `workloadspread manifests crd`: prints the CustomResourceDefinitions this
 * project serves, exactly as checked in under deploy/crds/.
 */
import { generatedCrdFiles } from '../api/crd.ts';
import { UsageError, type CliIo } from './io.ts';

export async function runManifests(options: { what: string }, io: CliIo): Promise<number> {
  if (options.what !== 'crd') throw new UsageError(`unknown manifest set "${options.what}" (supported: crd)`);
  io.out(generatedCrdFiles().map((f) => f.content).join('---\n'));
  return 0;
}
