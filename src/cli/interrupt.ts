/**
 * SIGINT/SIGTERM during a batch: the first signal aborts `controller` (the batch stops
 * cleanly, keeping only complete outputs); a second one means "now" and ends the process
 * with the signal's default action (outputs are atomic either way).
 */

/** Installs the handlers; returns the function that removes them. */
export function abortOnSignals(controller: AbortController): () => void {
  const detach = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      detach();
      process.kill(process.pid, signal);
      return;
    }
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return detach;
}
