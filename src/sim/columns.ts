/** Plain-text columns for the scenario reports (kubectl's look). Pure. */

/** Left-aligned columns two spaces apart (kubectl's look). */
export function columns(rows: readonly (readonly string[])[], indent = ''): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n') + '\n';
}
