/**
 * Horizontal bars of pods against a subset's limit, for `demo` and `status`:
 *
 *   █ a ready pod   ▒ an active pod that is not ready yet (pending, starting)
 *   · free quota (limit − pods)   a red █ a pod above the limit
 *
 * All bars of one view share one scale (`barScale`), so bars of different
 * subsets compare by length; with up to `maxCells` pods per subset every
 * pod is one cell. Unlimited subsets draw only their pods. Without colour the
 * glyphs are the same, so a log or a pipe shows the same picture.
 * Invariant: every bar of a scale is exactly `scale.cells` columns wide.
 */
import type { Style } from './style.ts';

export const GLYPH_READY = '█';
export const GLYPH_NOT_READY = '▒';
export const GLYPH_FREE = '·';

export interface BarCounts {
  /** Active pods that are ready. */
  ready: number;
  /** Active pods that are not ready. */
  notReady: number;
  /** Resolved maxReplicas; null when unlimited. */
  limit: number | null;
}

export interface BarScale {
  /** Pods per cell (1 when every pod fits). */
  podsPerCell: number;
  /** Width of every bar. */
  cells: number;
}

const nonNegative = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/** The smallest whole number of pods per cell that fits the largest bar into `maxCells`. */
export function barScale(bars: readonly BarCounts[], maxCells: number): BarScale {
  const cellsAvailable = Math.max(1, Math.floor(maxCells));
  let largest = 0;
  for (const b of bars) {
    const pods = nonNegative(b.ready) + nonNegative(b.notReady);
    largest = Math.max(largest, pods, b.limit === null ? 0 : nonNegative(b.limit));
  }
  const podsPerCell = Math.max(1, Math.ceil(largest / cellsAvailable));
  return { podsPerCell, cells: Math.max(1, Math.min(cellsAvailable, Math.ceil(largest / podsPerCell))) };
}

/** Cells for `n` pods: rounded, but never 0 for a non-zero count. */
function cellsFor(n: number, scale: BarScale): number {
  if (n <= 0) return 0;
  return Math.max(1, Math.round(n / scale.podsPerCell));
}

type Cell = 'ready' | 'notReady' | 'surplusReady' | 'surplusNotReady' | 'free' | 'empty';

/** The cells of one bar, left to right. */
export function barCells(counts: BarCounts, scale: BarScale): Cell[] {
  const ready = nonNegative(counts.ready);
  const notReady = nonNegative(counts.notReady);
  const limit = counts.limit === null ? null : nonNegative(counts.limit);
  const readyEnd = Math.min(scale.cells, cellsFor(ready, scale));
  const activeEnd = Math.min(scale.cells, Math.max(readyEnd, cellsFor(ready + notReady, scale)));
  const limitEnd = limit === null ? null : Math.min(scale.cells, cellsFor(limit, scale));
  const cells: Cell[] = [];
  for (let i = 0; i < scale.cells; i++) {
    const surplus = limitEnd !== null && i >= limitEnd;
    if (i < readyEnd) cells.push(surplus ? 'surplusReady' : 'ready');
    else if (i < activeEnd) cells.push(surplus ? 'surplusNotReady' : 'notReady');
    else if (limitEnd !== null && i < limitEnd) cells.push('free');
    else cells.push('empty');
  }
  return cells;
}

/** One bar, exactly `scale.cells` columns wide. */
export function renderBar(counts: BarCounts, scale: BarScale, style: Style): string {
  let out = '';
  // Runs of one kind share one escape sequence, so coloured output stays short.
  let run: Cell | undefined;
  let text = '';
  const flush = () => {
    if (run === undefined || text === '') return;
    switch (run) {
      case 'ready':
        out += style.green(text);
        break;
      case 'notReady':
        out += style.yellow(text);
        break;
      case 'surplusReady':
      case 'surplusNotReady':
        out += style.red(text);
        break;
      case 'free':
        out += style.dim(text);
        break;
      case 'empty':
        out += text;
        break;
    }
    text = '';
  };
  for (const cell of barCells(counts, scale)) {
    if (cell !== run) {
      flush();
      run = cell;
    }
    text += cell === 'ready' || cell === 'surplusReady' ? GLYPH_READY : cell === 'notReady' || cell === 'surplusNotReady' ? GLYPH_NOT_READY : cell === 'free' ? GLYPH_FREE : ' ';
  }
  flush();
  return out;
}

/** `pods/limit`, or just `pods` when unlimited. */
export function podsOverLimit(pods: number, limit: number | null): string {
  return limit === null ? `${pods}` : `${pods}/${limit}`;
}

/** The one-line legend printed under a bar view. */
export function barLegend(style: Style): string {
  return `${style.green(GLYPH_READY)} ready  ${style.yellow(GLYPH_NOT_READY)} not ready  ${style.dim(GLYPH_FREE)} free quota  ${style.red(GLYPH_READY)} above the limit`;
}
