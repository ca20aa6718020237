package org.mt.worker;

/**
 * The JNI bridge (app/src/main/cpp/mt_jni.cc) over the worker's C API. Handles are opaque; a
 * handle that was never started or is already freed throws IllegalStateException rather than
 * crashing. Use {@link WorkerController}, which owns a handle's lifetime, rather than these.
 *
 * <p>The library is libmtworker_jni (System.loadLibrary), or the file named by the system
 * property {@code mt.worker.jni.library} when set.
 */
final class NativeWorker {
  static final String LIBRARY_PROPERTY = "mt.worker.jni.library";

  static {
    String path = System.getProperty(LIBRARY_PROPERTY);
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("mtworker_jni");
    }
  }

  private NativeWorker() {}

  /**
   * Returns a handle. The bridge reads {@code config}'s fields by name. Throws
   * IllegalArgumentException with the reason on a bad configuration, IllegalStateException naming
   * the fields when WorkerConfig and the bridge disagree, NullPointerException on null.
   */
  static native long start(WorkerConfig config);

  static native WorkerStatus poll(long handle);

  /** charging, unmetered: 1, 0, -1 unknown; temperatureC NaN unknown. */
  static native void setDeviceState(long handle, int batteryPercent, int charging, int unmetered,
      double temperatureC);

  /** Leaves the run; true when the worker has ended within the timeout. */
  static native boolean stop(long handle, double timeoutSeconds);

  /** Stops the worker if needed, waits for it and frees it; 0 is fine. */
  static native void free(long handle);

  static void setDeviceState(long handle, DeviceState d) {
    setDeviceState(handle, d.batteryPercent, DeviceState.tri(d.charging), DeviceState.tri(d.unmetered),
        d.temperatureC);
  }
}
