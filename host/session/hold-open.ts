// "Awaited means done": a public method whose promise a caller awaits must
// keep this process alive until its work has finished, even when everything
// it waits on (an unref'd child's exit, an unref'd grace timer, a socket the
// kit let go of so a host can exit while the sandbox runs on) would not. A
// script that ends with `await sandbox.destroy()` must not exit halfway.
// holdOpen(work) keeps one ref'd timer alive while `work` runs.

/** Long enough never to fire in practice; it only has to exist (and be ref'd). */
const holdIntervalMs = 2 ** 30;

/** Runs `work` and keeps the event loop alive until it settles; resolves or rejects as it does. */
export async function holdOpen<T>(work: () => PromiseLike<T>): Promise<T> {
  const hold = setInterval(() => undefined, holdIntervalMs);
  try {
    return await work();
  } finally {
    clearInterval(hold);
  }
}
