package org.mt.worker;

/**
 * The device's condition as the app sees it (mt_device_state): battery, power, network and
 * temperature. Unknown values (null, -1, NaN) never make a worker leave. Immutable.
 */
public final class DeviceState {
  /** 0..100; -1 unknown or no battery. */
  public final int batteryPercent;
  /** On external power; null unknown. */
  public final Boolean charging;
  /** On an unmetered network (Wi-Fi, Ethernet); null unknown. */
  public final Boolean unmetered;
  /** Degrees Celsius; NaN unknown. */
  public final double temperatureC;

  public DeviceState(int batteryPercent, Boolean charging, Boolean unmetered, double temperatureC) {
    this.batteryPercent = batteryPercent >= 0 && batteryPercent <= 100 ? batteryPercent : -1;
    this.charging = charging;
    this.unmetered = unmetered;
    this.temperatureC = temperatureC;
  }

  public static DeviceState unknown() {
    return new DeviceState(-1, null, null, Double.NaN);
  }

  public DeviceState withBattery(int percent, Boolean charging) {
    return new DeviceState(percent, charging, unmetered, temperatureC);
  }

  public DeviceState withUnmetered(Boolean unmetered) {
    return new DeviceState(batteryPercent, charging, unmetered, temperatureC);
  }

  public DeviceState withTemperature(double celsius) {
    return new DeviceState(batteryPercent, charging, unmetered, celsius);
  }

  static int tri(Boolean b) {
    return b == null ? -1 : (b ? 1 : 0);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof DeviceState)) return false;
    DeviceState d = (DeviceState) o;
    return batteryPercent == d.batteryPercent && java.util.Objects.equals(charging, d.charging)
        && java.util.Objects.equals(unmetered, d.unmetered)
        && Double.compare(temperatureC, d.temperatureC) == 0;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(batteryPercent, charging, unmetered, temperatureC);
  }

  @Override
  public String toString() {
    return "DeviceState{battery=" + batteryPercent + "%, charging=" + charging + ", unmetered=" + unmetered
        + ", temperature=" + temperatureC + "}";
  }
}
