/** Plain-text tables for terminal output: left-aligned columns, two spaces apart, like kubectl; control characters in cells shown escaped. */
import { escapeTerminal } from '../k8s/terminal-text.ts';
import { alignColumns } from './style.ts';

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return alignColumns([header, ...rows].map((row) => row.map(escapeTerminal))).join('\n') + '\n';
}
