// Preloaded (node --expose-gc --require) into the published-build manager by bench/lib/dist-manager.ts:
// SIGUSR2 runs a full garbage collection, so the benchmark reads the settled RSS and heap of what is
// really retained. Benchmark support only; the manager itself is unchanged.
process.on('SIGUSR2', () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
});
