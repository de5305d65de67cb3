import { describe, expect, it } from 'vitest';
import { MAX_UNIFIED_EXEC_PROCESSES, ProcessStore, pickVictim, type StoredEntry } from './process-store.js';

const entry = (id: number, lastUsed: number, exited = false): StoredEntry => ({
  id,
  lastUsed,
  hasExited: () => exited,
});

describe('ProcessStore', () => {
  it('hands out 1000, 1001, … in deterministic mode and reuses released ids from the top', () => {
    const store = new ProcessStore(true);
    expect([store.allocate(), store.allocate(), store.allocate()]).toEqual([1000, 1001, 1002]);
    store.release(1002);
    expect(store.allocate()).toBe(1002);
    store.release(1000);
    expect(store.allocate()).toBe(1003);
  });

  it('hands out distinct random ids in [1000, 100000)', () => {
    const store = new ProcessStore();
    const ids = Array.from({ length: 500 }, () => store.allocate());
    expect(new Set(ids).size).toBe(500);
    expect(ids.every((id) => id >= 1000 && id < 100_000)).toBe(true);
  });

  it('prunes only when full, and the victim leaves the store', () => {
    const store = new ProcessStore<StoredEntry>(true);
    for (let i = 0; i < MAX_UNIFIED_EXEC_PROCESSES; i++)
      expect(store.store(entry(store.allocate(), i))).toBeUndefined();
    const victim = store.store(entry(store.allocate(), 1000));
    expect(victim?.id).toBe(1000);
    expect(store.get(1000)).toBeUndefined();
    expect(store.size).toBe(MAX_UNIFIED_EXEC_PROCESSES);
  });

  it('drains everything, reservations included', () => {
    const store = new ProcessStore<StoredEntry>(true);
    store.store(entry(store.allocate(), 0));
    store.allocate();
    expect(store.drain().map((e) => e.id)).toEqual([1000]);
    expect(store.allocate()).toBe(1000);
  });
});

describe('pickVictim', () => {
  const entries = (count: number, exited: number[] = []) =>
    Array.from({ length: count }, (_, i) => entry(i, i, exited.includes(i)));

  it('picks the least recently used exited process outside the 8 most recent', () => {
    expect(pickVictim(entries(64, [3, 10, 60]))?.id).toBe(3);
  });

  it('otherwise picks the least recently used', () => {
    expect(pickVictim(entries(64))?.id).toBe(0);
  });

  it('never picks a process a tool call is still waiting on; with all busy, none', () => {
    const busy = entries(64).map((e) => (e.id < 3 ? { ...e, activeCalls: 1 } : e));
    expect(pickVictim(busy)?.id).toBe(3);
    expect(pickVictim(entries(64).map((e) => ({ ...e, activeCalls: 1 })))).toBeUndefined();
    const store = new ProcessStore<StoredEntry>(true);
    for (let i = 0; i < MAX_UNIFIED_EXEC_PROCESSES; i++)
      store.store({ ...entry(store.allocate(), i), activeCalls: 1 });
    expect(store.store(entry(store.allocate(), 100))).toBeUndefined();
    expect(store.size).toBe(MAX_UNIFIED_EXEC_PROCESSES + 1);
  });

  it('never picks one of the 8 most recently used, even if it exited', () => {
    expect(pickVictim(entries(64, [63, 60]))?.id).toBe(0);
    expect(pickVictim(entries(8, [0]))).toBeUndefined();
  });
});
