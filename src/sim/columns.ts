/** Plain-text columns for the scenario reports (kubectl's look), control characters in cells shown escaped. Pure. */
import { escapeTerminal } from '../k8s/terminal-text.ts';

/** Left-aligned columns two spaces apart (kubectl's look). */
export function columns(cells: readonly (readonly string[])[], indent = ''): string {
  const rows = cells.map((r) => r.map(escapeTerminal));
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n') + '\n';
}
