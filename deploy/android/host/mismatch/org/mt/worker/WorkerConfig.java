package org.mt.worker;

/**
 * A WorkerConfig that disagrees with the JNI bridge, for MismatchedConfigTest only: {@code hub}
 * is missing and {@code threads} is a long. Every other field is as in the real class.
 */
public final class WorkerConfig {
  public final String name = "mismatched";
  public final String token = null;
  public final String device = null;
  public final long threads = 1;
  public final String dataDir = null;
  public final long memoryBudgetBytes = 0;
  public final double connectTimeoutSeconds = 1;
  public final String reportPath = null;
  public final int minBatteryPercent = 0;
  public final boolean requireCharging = false;
  public final boolean requireUnmetered = false;
  public final double maxTemperatureC = 0;
  public final boolean readSystemDeviceState = false;
  public final boolean insecure = false;
  public final String tlsCaPath = null;
  public final String hubFingerprint = null;
  public final String stateDir = null;
  public final String tlsCertPath = null;
  public final String tlsKeyPath = null;
  public final String allowDataDirs = null;
}
