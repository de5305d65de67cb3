// Shared by every benchmark: medians, alternating runs, and the `BENCH <name> <value> <unit> …` lines.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Runs `subject` and `baseline` alternately (after `warmup` rounds of each) and returns both medians. */
export async function alternate({ subject, baseline, rounds, warmup = 0 }) {
  for (let i = 0; i < warmup; i++) {
    await subject();
    await baseline();
  }
  const subjectTimes = [];
  const baselineTimes = [];
  for (let i = 0; i < rounds; i++) {
    // Swap the order each round so neither side always runs on a warmer machine.
    if (i % 2 === 0) {
      subjectTimes.push(await subject());
      baselineTimes.push(await baseline());
    } else {
      baselineTimes.push(await baseline());
      subjectTimes.push(await subject());
    }
  }
  return { subject: median(subjectTimes), baseline: median(baselineTimes) };
}

/** Prints one figure; with a target (`<=1.10`, `>=0.80`) it also says ok or MISSED. */
export function report(name, value, unit, target) {
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(value >= 100 ? 0 : 2);
  let line = `BENCH ${name} ${shown}${unit ? ` ${unit}` : ''}`;
  if (target) {
    const bound = Number(target.slice(2));
    const ok = target.startsWith('<=') ? value <= bound : value >= bound;
    line += ` target${target} ${ok ? 'ok' : 'MISSED'}`;
  }
  console.log(line);
}

export async function timeMs(run) {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
