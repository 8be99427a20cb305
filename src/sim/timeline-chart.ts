/**
 * A hand-written SVG line chart of pods per subset over the steps of a run,
 * for the HTML report: one coloured line per subset (grey for pods without
 * a subset), its limit as a dashed line of the same colour, a point per
 * step with a `<title>` tooltip (readable without JavaScript), integer
 * y ticks, step numbers on the x axis, a legend on the right.
 *
 * Invariants: the output is one `<svg>` element with no script, no external
 * reference and every caller-provided text escaped; it is inline SVG for an
 * HTML page (no XML namespace declaration needed there). Pure.
 */

export interface ChartSeries {
  label: string;
  /** One value per x position (null: no point, e.g. before the subset existed). */
  values: (number | null)[];
  /** Dashed reference line (the subset's limit) per x position. */
  limits?: (number | null)[];
  /** Draw in the "nothing assigned" grey. */
  muted?: boolean;
}

export interface ChartInput {
  /** One label per x position (`setup`, `1`, `2`, …). */
  xLabels: string[];
  /** Tooltip heading per x position (`step 3: scale Deployment web to 7`). */
  xTitles: string[];
  series: ChartSeries[];
  /** Accessible name of the chart. */
  title: string;
}

/** A palette that stays apart for colour-blind readers (Okabe–Ito). */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
const MUTED = '#999999';

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A step between ticks that gives at most ~6 integer ticks up to `max`. */
function tickStep(max: number): number {
  for (const step of [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000]) if (max / step <= 6) return step;
  return Math.ceil(max / 6);
}

const fmt = (n: number): string => (Math.round(n * 10) / 10).toString();

export function renderTimelineChart(input: ChartInput): string {
  const n = input.xLabels.length;
  const legendWidth = 150;
  const width = Math.max(480, Math.min(1000, 120 + n * 48)) + legendWidth;
  const height = Math.max(260, 40 + input.series.length * 18);
  const left = 44;
  const right = width - legendWidth - 12;
  const top = 16;
  const bottom = height - 36;
  const all = input.series.flatMap((s) => [...s.values, ...(s.limits ?? [])]).filter((v): v is number => v !== null);
  const step = tickStep(Math.max(1, ...all));
  const max = Math.max(step, Math.ceil(Math.max(1, ...all) / step) * step);
  const x = (i: number) => (n <= 1 ? (left + right) / 2 : left + ((right - left) * i) / (n - 1));
  const y = (v: number) => bottom - ((bottom - top) * v) / max;
  const parts: string[] = [];
  parts.push(`<svg class="timeline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(input.title)}">`);
  parts.push(`<title>${escapeXml(input.title)}</title>`);
  // Grid and y axis.
  for (let v = 0; v <= max; v += step) {
    parts.push(`<line x1="${left}" y1="${fmt(y(v))}" x2="${right}" y2="${fmt(y(v))}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end" font-size="11" fill="#555">${v}</text>`);
  }
  parts.push(`<text x="12" y="${fmt((top + bottom) / 2)}" font-size="11" fill="#555" transform="rotate(-90 12 ${fmt((top + bottom) / 2)})" text-anchor="middle">pods</text>`);
  // X labels: thinned when crowded.
  const every = Math.max(1, Math.ceil(n / 20));
  input.xLabels.forEach((label, i) => {
    if (i % every !== 0 && i !== n - 1) return;
    parts.push(`<text x="${fmt(x(i))}" y="${bottom + 16}" text-anchor="middle" font-size="11" fill="#555">${escapeXml(label)}</text>`);
  });
  parts.push(`<text x="${fmt((left + right) / 2)}" y="${height - 4}" text-anchor="middle" font-size="11" fill="#555">step</text>`);
  parts.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#888"/>`);

  let colour = 0;
  input.series.forEach((s, si) => {
    const c = s.muted === true ? MUTED : (PALETTE[colour++ % PALETTE.length] ?? '#000');
    const limits = s.limits ?? [];
    if (limits.some((l) => l !== null)) {
      // A step line: the limit holds from one step until the next.
      let d = '';
      limits.forEach((l, i) => {
        if (l === null) return;
        const x0 = n <= 1 ? left : x(i);
        const x1 = n <= 1 ? right : i === n - 1 ? x(i) : x(i + 1);
        d += `M${fmt(x0)} ${fmt(y(l))}H${fmt(x1)}`;
      });
      parts.push(`<path d="${d}" stroke="${c}" stroke-width="1.5" stroke-dasharray="5 4" fill="none" opacity="0.7"><title>${escapeXml(`${s.label}: limit`)}</title></path>`);
    }
    const points = s.values.map((v, i) => (v === null ? undefined : `${fmt(x(i))},${fmt(y(v))}`)).filter((p): p is string => p !== undefined);
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" stroke="${c}" stroke-width="2.5" fill="none"/>`);
    s.values.forEach((v, i) => {
      if (v === null) return;
      const limit = limits[i];
      const tip = `${input.xTitles[i] ?? input.xLabels[i] ?? ''}\n${s.label}: ${v} pod${v === 1 ? '' : 's'}${limit === null || limit === undefined ? '' : ` (limit ${limit})`}`;
      parts.push(`<circle cx="${fmt(x(i))}" cy="${fmt(y(v))}" r="3.5" fill="${c}"><title>${escapeXml(tip)}</title></circle>`);
    });
    const ly = top + 8 + si * 18;
    parts.push(`<rect x="${right + 16}" y="${ly - 8}" width="12" height="12" fill="${c}"/>`);
    parts.push(`<text x="${right + 34}" y="${ly + 2}" font-size="12" fill="#222">${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
