package org.mt.worker;

/**
 * What an embedded worker is started with (mt_worker_config). Immutable; build with {@link
 * #builder(String)}. The native side checks it at start: a bad hub address or value makes {@link
 * WorkerController#start} throw IllegalArgumentException with the reason.
 *
 * <p>The JNI bridge reads the public fields by name and type (kConfigFields in
 * worker/mt_worker_config_fields.h, one line per mt_worker_config field): a new option is a field
 * here, its builder field and method, and one line there; a renamed or retyped field makes every
 * start throw IllegalStateException naming it. tests/android/config_fields_agree.py checks this
 * class against the table (docs/android.md).
 *
 * <p>Unlike the C API, the defaults are an app's: train only while charging and on an unmetered
 * network.
 */
public final class WorkerConfig {
  /** "host", "host:port" or "[v6]:port". */
  public final String hub;
  /** Shown by the hub; null: the host name. */
  public final String name;
  /** Shared secret the hub expects; null: none. */
  public final String token;
  /** "cpu" (null), "opencl" or "auto". */
  public final String device;
  /** Compute threads; 0: 1; negative is refused at start. */
  public final int threads;
  /** Train on these local files; null: the hub's dataset. */
  public final String dataDir;
  /** For the model and its batch; 0: no limit. */
  public final long memoryBudgetBytes;
  /** Keep trying to (re)join this long; 0: 600. */
  public final double connectTimeoutSeconds;
  /** JSON report written when the worker ends; null: none. */
  public final String reportPath;
  /** Leave below this battery percentage while not charging; 0: never. */
  public final int minBatteryPercent;
  /** Leave when not on external power. Default true. */
  public final boolean requireCharging;
  /** Leave on a metered network. Default true. */
  public final boolean requireUnmetered;
  /** Leave above this temperature (Celsius); 0: never. */
  public final double maxTemperatureC;
  /**
   * Read battery and temperature from /sys until the app pushes a {@link DeviceState}. Default
   * true; an Android service that feeds the state itself turns it off.
   */
  public final boolean readSystemDeviceState;
  /** Plaintext instead of TLS (the hub runs with --insecure). Default false. */
  public final boolean insecure;
  /** Trust a hub whose certificate chains to this CA (PEM file); null: see hubFingerprint. */
  public final String tlsCaPath;
  /**
   * Trust exactly the hub certificate with this fingerprint ("SHA256:AB:CD:..." as mthub prints
   * it); with neither this nor tlsCaPath, the first fingerprint seen is remembered in stateDir and
   * a different one refused.
   */
  public final String hubFingerprint;
  /** Where known_hubs lives; an app passes its files directory (getFilesDir()). */
  public final String stateDir;
  /** Mutual TLS: this worker's certificate and key (PEM files); null: none. */
  public final String tlsCertPath;

  public final String tlsKeyPath;
  /**
   * Directories ("DIR:DIR:...") under which the hub may name its dataset; null: known dataset
   * names only (an app gives its own files with dataDir instead).
   */
  public final String allowDataDirs;

  private WorkerConfig(Builder b) {
    hub = b.hub;
    name = b.name;
    token = b.token;
    device = b.device;
    threads = b.threads;
    dataDir = b.dataDir;
    memoryBudgetBytes = b.memoryBudgetBytes;
    connectTimeoutSeconds = b.connectTimeoutSeconds;
    reportPath = b.reportPath;
    minBatteryPercent = b.minBatteryPercent;
    requireCharging = b.requireCharging;
    requireUnmetered = b.requireUnmetered;
    maxTemperatureC = b.maxTemperatureC;
    readSystemDeviceState = b.readSystemDeviceState;
    insecure = b.insecure;
    tlsCaPath = b.tlsCaPath;
    hubFingerprint = b.hubFingerprint;
    stateDir = b.stateDir;
    tlsCertPath = b.tlsCertPath;
    tlsKeyPath = b.tlsKeyPath;
    allowDataDirs = b.allowDataDirs;
  }

  public static Builder builder(String hub) {
    return new Builder(hub);
  }

  public Builder toBuilder() {
    Builder b = new Builder(hub);
    b.name = name;
    b.token = token;
    b.device = device;
    b.threads = threads;
    b.dataDir = dataDir;
    b.memoryBudgetBytes = memoryBudgetBytes;
    b.connectTimeoutSeconds = connectTimeoutSeconds;
    b.reportPath = reportPath;
    b.minBatteryPercent = minBatteryPercent;
    b.requireCharging = requireCharging;
    b.requireUnmetered = requireUnmetered;
    b.maxTemperatureC = maxTemperatureC;
    b.readSystemDeviceState = readSystemDeviceState;
    b.insecure = insecure;
    b.tlsCaPath = tlsCaPath;
    b.hubFingerprint = hubFingerprint;
    b.stateDir = stateDir;
    b.tlsCertPath = tlsCertPath;
    b.tlsKeyPath = tlsKeyPath;
    b.allowDataDirs = allowDataDirs;
    return b;
  }

  public static final class Builder {
    private String hub;
    private String name;
    private String token;
    private String device;
    private int threads;
    private String dataDir;
    private long memoryBudgetBytes;
    private double connectTimeoutSeconds;
    private String reportPath;
    private int minBatteryPercent;
    private boolean requireCharging = true;
    private boolean requireUnmetered = true;
    private double maxTemperatureC;
    private boolean readSystemDeviceState = true;
    private boolean insecure;
    private String tlsCaPath;
    private String hubFingerprint;
    private String stateDir;
    private String tlsCertPath;
    private String tlsKeyPath;
    private String allowDataDirs;

    private Builder(String hub) {
      this.hub = hub;
    }

    public Builder hub(String v) { hub = v; return this; }
    public Builder name(String v) { name = v; return this; }
    public Builder token(String v) { token = v; return this; }
    public Builder device(String v) { device = v; return this; }
    public Builder threads(int v) { threads = v; return this; }
    public Builder dataDir(String v) { dataDir = v; return this; }
    public Builder memoryBudgetBytes(long v) { memoryBudgetBytes = v; return this; }
    public Builder connectTimeoutSeconds(double v) { connectTimeoutSeconds = v; return this; }
    public Builder reportPath(String v) { reportPath = v; return this; }
    public Builder minBatteryPercent(int v) { minBatteryPercent = v; return this; }
    public Builder requireCharging(boolean v) { requireCharging = v; return this; }
    public Builder requireUnmetered(boolean v) { requireUnmetered = v; return this; }
    public Builder maxTemperatureC(double v) { maxTemperatureC = v; return this; }
    public Builder readSystemDeviceState(boolean v) { readSystemDeviceState = v; return this; }
    public Builder insecure(boolean v) { insecure = v; return this; }
    public Builder tlsCaPath(String v) { tlsCaPath = v; return this; }
    public Builder hubFingerprint(String v) { hubFingerprint = v; return this; }
    public Builder stateDir(String v) { stateDir = v; return this; }
    public Builder tlsCertPath(String v) { tlsCertPath = v; return this; }
    public Builder tlsKeyPath(String v) { tlsKeyPath = v; return this; }
    public Builder allowDataDirs(String v) { allowDataDirs = v; return this; }

    public WorkerConfig build() {
      return new WorkerConfig(this);
    }
  }
}
