/**
 * One run of `work` at a time per key (a runtime's services: one database, one set of queues)
 * in this process. A call that arrives while a run is in progress returns `'coalesced'` at
 * once and makes that run go round once more when it ends, with the arguments it started
 * with, so whatever the late call was for is seen by a pass that began after it. For work that
 * looks at "everything new" (the outbox relay), this turns a burst of
 * wake-ups into one or two passes instead of a queue of runs contending for the same lock.
 */
export function coalescing<K extends object, A extends unknown[], T>(
  work: (key: K, ...args: A) => Promise<T>,
): (key: K, ...args: A) => Promise<T | 'coalesced'> {
  const states = new WeakMap<K, { again: boolean }>();
  return async (key: K, ...args: A) => {
    const running = states.get(key);
    if (running) {
      running.again = true;
      return 'coalesced';
    }
    const state = { again: false };
    states.set(key, state);
    try {
      let result: T;
      do {
        state.again = false;
        result = await work(key, ...args);
      } while (state.again);
      return result;
    } finally {
      states.delete(key);
    }
  };
}
