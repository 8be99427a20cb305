/** Plain-text tables for terminal output: left-aligned columns, two spaces apart, like kubectl. */
import { alignColumns } from './style.ts';

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return alignColumns([header, ...rows]).join('\n') + '\n';
}
