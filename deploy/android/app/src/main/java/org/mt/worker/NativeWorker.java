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

  /** Returns a handle; throws IllegalArgumentException with the reason on a bad configuration. */
  static native long start(String hub, String name, String token, String device, int threads,
      String dataDir, long memoryBudgetBytes, double connectTimeoutSeconds, String reportPath,
      int minBatteryPercent, boolean requireCharging, boolean requireUnmetered,
      double maxTemperatureC, boolean readSystemDeviceState);

  static native WorkerStatus poll(long handle);

  /** charging, unmetered: 1, 0, -1 unknown; temperatureC NaN unknown. */
  static native void setDeviceState(long handle, int batteryPercent, int charging, int unmetered,
      double temperatureC);

  /** Leaves the run; true when the worker has ended within the timeout. */
  static native boolean stop(long handle, double timeoutSeconds);

  /** Stops the worker if needed, waits for it and frees it; 0 is fine. */
  static native void free(long handle);

  static long start(WorkerConfig c) {
    return start(c.hub, c.name, c.token, c.device, c.threads, c.dataDir, c.memoryBudgetBytes,
        c.connectTimeoutSeconds, c.reportPath, c.minBatteryPercent, c.requireCharging,
        c.requireUnmetered, c.maxTemperatureC, c.readSystemDeviceState);
  }

  static void setDeviceState(long handle, DeviceState d) {
    setDeviceState(handle, d.batteryPercent, DeviceState.tri(d.charging), DeviceState.tri(d.unmetered),
        d.temperatureC);
  }
}
