package org.mt.worker;

/** A snapshot of an embedded worker (mt_worker_status in worker/mt_worker.h). Immutable. */
public final class WorkerStatus {
  /** Mirrors mt_worker_state; the ordinals are the C values. */
  public enum State {
    STARTING,
    JOINING,
    TRAINING,
    /** Lost the hub; joining again with backoff. */
    RECONNECTING,
    STOPPING,
    /** Ended normally: see {@link WorkerStatus#stopReason}. */
    DONE,
    /** Ended on an error: see {@link WorkerStatus#lastError}. */
    FAILED;

    static State fromCode(int code) {
      State[] all = values();
      return code >= 0 && code < all.length ? all[code] : FAILED;
    }

    /** DONE or FAILED: the worker thread has ended and will not train again. */
    public boolean isEnded() {
      return this == DONE || this == FAILED;
    }
  }

  public final State state;
  /** The hub's step this worker last trained (0-based). */
  public final long step;
  /** Steps this worker trained. */
  public final long stepsTrained;
  /** The hub's mean training loss of the last step. */
  public final double loss;
  /** This worker's batch in its last step. */
  public final int batch;
  /** The hub's test accuracy at the end of the run; -1 before. */
  public final double testAccuracy;
  /** "" unless FAILED. */
  public final String lastError;
  /** Why the run ended for this worker; "" while running. */
  public final String stopReason;

  /** Called by the JNI bridge (the signature is part of its contract). */
  WorkerStatus(int stateCode, long step, long stepsTrained, double loss, int batch, double testAccuracy,
      String lastError, String stopReason) {
    this.state = State.fromCode(stateCode);
    this.step = step;
    this.stepsTrained = stepsTrained;
    this.loss = loss;
    this.batch = batch;
    this.testAccuracy = testAccuracy;
    this.lastError = lastError == null ? "" : lastError;
    this.stopReason = stopReason == null ? "" : stopReason;
  }

  /** "step N, loss X" for a notification; the state while not yet training. */
  public String summary() {
    switch (state) {
      case STARTING:
      case JOINING:
        return state.name().toLowerCase(java.util.Locale.ROOT) + (stepsTrained > 0 ? ", step " + step : "");
      case FAILED:
        return "failed: " + lastError;
      case DONE:
        return "done at step " + step + ": " + stopReason;
      default:
        if (stepsTrained == 0) return state.name().toLowerCase(java.util.Locale.ROOT);
        return String.format(java.util.Locale.ROOT, "step %d, loss %.4f%s", step, loss,
            state == State.RECONNECTING ? " (reconnecting)" : "");
    }
  }

  @Override
  public String toString() {
    return String.format(java.util.Locale.ROOT,
        "WorkerStatus{state=%s, step=%d, stepsTrained=%d, loss=%.5f, batch=%d, testAccuracy=%.4f, lastError='%s', stopReason='%s'}",
        state, step, stepsTrained, loss, batch, testAccuracy, lastError, stopReason);
  }
}
