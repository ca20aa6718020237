package org.mt.worker;

import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Runs one embedded worker for an app: start, status, device state, stop. Plain Java (no Android
 * dependencies), so the Android service stays thin and this is tested on any JDK. Thread-safe.
 *
 * <pre>
 *   try (WorkerController c = new WorkerController(status -> show(status.summary()), 1000)) {
 *     c.onDeviceStateChanged(state);          // before or after start
 *     c.start(WorkerConfig.builder("192.168.1.5").token("secret").build());
 *     ...
 *     c.stop(10);                             // leaves the run; the hub is told
 *   }
 * </pre>
 *
 * <p>A worker that has ended (DONE or FAILED) can be replaced by calling {@link #start} again.
 */
public final class WorkerController implements AutoCloseable {
  /**
   * Status updates, on the controller's polling thread: one per interval while the worker runs,
   * and a last one with an ended state when it ends on its own or after {@link #stop} (none after
   * {@link #close}).
   */
  public interface Listener {
    void onStatus(WorkerStatus status);
  }

  private final Listener listener;
  private final long pollIntervalMillis;
  // Write lock: the handle changes (start, close). Read lock: the handle is used; the native
  // calls are thread-safe among themselves.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private long handle; // guarded by lock
  private boolean closed; // guarded by lock
  private long generation; // guarded by lock; which worker the poller reports on
  private ScheduledExecutorService poller; // guarded by lock
  private final Object stateLock = new Object();
  private volatile DeviceState deviceState;
  private volatile WorkerStatus lastStatus;

  /** No listener: the app asks with {@link #status()}. */
  public WorkerController() {
    this(null, 1000);
  }

  /** Calls {@code listener} every {@code pollIntervalMillis} while a worker runs, and once when it ends. */
  public WorkerController(Listener listener, long pollIntervalMillis) {
    if (pollIntervalMillis <= 0) throw new IllegalArgumentException("pollIntervalMillis must be positive");
    this.listener = listener;
    this.pollIntervalMillis = pollIntervalMillis;
  }

  /**
   * Starts a worker. Throws IllegalArgumentException with the reason when the configuration is
   * bad (e.g. "cannot resolve 'no-such-host.invalid'", "no hub address"), IllegalStateException
   * when a worker is still running, the controller is closed, or the native library was built
   * for another WorkerConfig (the message names the fields).
   */
  public void start(WorkerConfig config) {
    Objects.requireNonNull(config, "config");
    lock.writeLock().lock();
    try {
      if (closed) throw new IllegalStateException("the controller is closed");
      if (handle != 0) {
        WorkerStatus s = NativeWorker.poll(handle);
        if (!s.state.isEnded()) throw new IllegalStateException("a worker is already running (" + s.state + "); stop it first");
        NativeWorker.free(handle);
        handle = 0;
      }
      long h = NativeWorker.start(config); // reads config's fields by name; may throw
      handle = h;
      ++generation;
      DeviceState d = deviceState;
      if (d != null) NativeWorker.setDeviceState(h, d);
      lastStatus = NativeWorker.poll(h);
      if (listener != null) {
        if (poller == null) {
          poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mt-worker-status");
            t.setDaemon(true);
            return t;
          });
        }
        final long g = generation;
        poller.schedule(() -> pollLoop(g), 0, TimeUnit.MILLISECONDS);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** The worker's status now; IllegalStateException before the first start or after close. */
  public WorkerStatus status() {
    lock.readLock().lock();
    try {
      if (closed) throw new IllegalStateException("the controller is closed");
      if (handle == 0) throw new IllegalStateException("no worker started");
      WorkerStatus s = NativeWorker.poll(handle);
      lastStatus = s;
      return s;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The last status seen (by {@link #status()}, the poller or close), or null. Never blocks. */
  public WorkerStatus lastStatus() {
    return lastStatus;
  }

  /**
   * The device's battery, power, network and temperature as the app sees them; checked against
   * the policy before every step. Kept and pushed to workers started later, too.
   */
  public void onDeviceStateChanged(DeviceState state) {
    Objects.requireNonNull(state, "state");
    lock.readLock().lock();
    try {
      synchronized (stateLock) { // the last state given is the one the worker keeps
        deviceState = state;
        if (!closed && handle != 0) NativeWorker.setDeviceState(handle, state);
      }
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Leaves the run (the hub is told, the stop reason is "stopped by the app") and waits up to
   * {@code timeoutSeconds}. True when the worker has ended, or none was running.
   */
  public boolean stop(double timeoutSeconds) {
    lock.readLock().lock();
    try {
      if (closed || handle == 0) return true;
      return NativeWorker.stop(handle, timeoutSeconds);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Stops the worker if needed, waits for it and frees it. Idempotent. */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) return;
      closed = true;
      if (poller != null) poller.shutdownNow(); // no wait: close may run on the poller's thread
      poller = null;
      if (handle != 0) {
        long h = handle;
        handle = 0;
        NativeWorker.stop(h, 0);
        NativeWorker.free(h);
        // The final status is not read after free; lastStatus keeps what was seen.
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void pollLoop(long g) {
    WorkerStatus s;
    lock.readLock().lock();
    try {
      if (closed || handle == 0 || generation != g) return;
      s = NativeWorker.poll(handle);
      lastStatus = s;
    } catch (RuntimeException e) {
      return;
    } finally {
      lock.readLock().unlock();
    }
    try {
      listener.onStatus(s);
    } catch (RuntimeException e) {
      // A listener's bug must not stop the updates.
    }
    if (s.state.isEnded()) return;
    lock.readLock().lock();
    try {
      if (!closed && poller != null && generation == g) {
        poller.schedule(() -> pollLoop(g), pollIntervalMillis, TimeUnit.MILLISECONDS);
      }
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed meanwhile
    } finally {
      lock.readLock().unlock();
    }
  }
}
