package org.mt.worker.android;

import android.app.ActivityManager;
import android.app.Notification;
import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.app.PendingIntent;
import android.app.Service;
import android.content.BroadcastReceiver;
import android.content.Context;
import android.content.Intent;
import android.content.IntentFilter;
import android.content.pm.ServiceInfo;
import android.net.ConnectivityManager;
import android.net.Network;
import android.net.NetworkCapabilities;
import android.os.BatteryManager;
import android.os.Build;
import android.os.Handler;
import android.os.IBinder;
import android.os.Looper;
import android.os.PowerManager;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.mt.worker.DeviceState;
import org.mt.worker.WorkerConfig;
import org.mt.worker.WorkerController;
import org.mt.worker.WorkerStatus;

/**
 * Foreground service (dataSync) that trains with the embedded worker. Thin by design: it reads
 * the configuration from the starting Intent, feeds battery and network state to a {@link
 * WorkerController}, shows "step N, loss X" in its notification, and stops itself when the
 * worker ends. All the logic is in the plain Java controller.
 *
 * <p>Extras: hub (required, "host[:port]"), token, device ("cpu", "opencl", "auto"), name,
 * threads, minBattery (percent), requireCharging and requireUnmetered (both default true), data
 * (a directory of IDX or CIFAR-10 files on the device; default: the app's external files
 * directory's "dataset" folder when it exists, else the hub's dataset path), hubFingerprint
 * ("SHA256:AB:..." as mthub prints it; without it the first certificate seen is remembered in the
 * app's files directory and a changed one refused), insecure (plaintext, for a hub started with
 * --insecure).
 */
public final class MtWorkerService extends Service {
  public static final String EXTRA_HUB = "hub";
  public static final String EXTRA_TOKEN = "token";
  public static final String EXTRA_DEVICE = "device";
  public static final String EXTRA_NAME = "name";
  public static final String EXTRA_THREADS = "threads";
  public static final String EXTRA_MIN_BATTERY = "minBattery";
  public static final String EXTRA_REQUIRE_CHARGING = "requireCharging";
  public static final String EXTRA_REQUIRE_UNMETERED = "requireUnmetered";
  public static final String EXTRA_DATA = "data";
  public static final String EXTRA_HUB_FINGERPRINT = "hubFingerprint";
  public static final String EXTRA_INSECURE = "insecure";
  public static final String ACTION_STOP = "org.mt.worker.action.STOP";

  private static final String CHANNEL_ID = "training";
  private static final int NOTIFICATION_ID = 1;

  private final Handler main = new Handler(Looper.getMainLooper());
  // Every controller call runs here: start resolves the hub's name and must not block the UI.
  private final ExecutorService calls = Executors.newSingleThreadExecutor();
  private WorkerController controller;
  private NotificationManager notifications;
  private ConnectivityManager connectivity;
  private PowerManager.WakeLock wakeLock;
  private boolean started;
  private boolean finished;
  // Written on the main thread only.
  private DeviceState deviceState = DeviceState.unknown();

  private final BroadcastReceiver batteryReceiver = new BroadcastReceiver() {
    @Override
    public void onReceive(Context context, Intent intent) {
      onBattery(intent);
    }
  };

  private final ConnectivityManager.NetworkCallback networkCallback = new ConnectivityManager.NetworkCallback() {
    @Override
    public void onCapabilitiesChanged(Network network, NetworkCapabilities caps) {
      final boolean unmetered = caps.hasCapability(NetworkCapabilities.NET_CAPABILITY_NOT_METERED);
      main.post(() -> updateDeviceState(deviceState.withUnmetered(unmetered)));
    }

    @Override
    public void onLost(Network network) {
      // No network: unknown, so the worker keeps trying to reconnect rather than leaving.
      main.post(() -> updateDeviceState(deviceState.withUnmetered(null)));
    }
  };

  @Override
  public void onCreate() {
    super.onCreate();
    notifications = getSystemService(NotificationManager.class);
    notifications.createNotificationChannel(
        new NotificationChannel(CHANNEL_ID, "Training", NotificationManager.IMPORTANCE_LOW));
    connectivity = getSystemService(ConnectivityManager.class);
    controller = new WorkerController(status -> main.post(() -> onStatus(status)), 1000);
  }

  // mtworker --memory-budget auto's rule: half the memory available now, counted above the
  // level where Android starts killing background work (the rest stays the user's). The
  // worker recomputes activations where its batch would not fit, or the hub cuts the batch.
  private long memoryBudget() {
    ActivityManager.MemoryInfo info = new ActivityManager.MemoryInfo();
    getSystemService(ActivityManager.class).getMemoryInfo(info);
    return Math.max(64L << 20, (info.availMem - info.threshold) / 2);
  }

  @Override
  public int onStartCommand(Intent intent, int flags, int startId) {
    // A service started with startForegroundService must call startForeground promptly.
    Notification first = notification(started ? currentText() : "starting", !finished);
    if (Build.VERSION.SDK_INT >= 29) {
      startForeground(NOTIFICATION_ID, first, ServiceInfo.FOREGROUND_SERVICE_TYPE_DATA_SYNC);
    } else {
      startForeground(NOTIFICATION_ID, first);
    }
    if (intent != null && ACTION_STOP.equals(intent.getAction())) {
      if (started) {
        calls.execute(() -> controller.stop(10)); // the listener then sees DONE and finishes
      } else {
        finish("stopped");
      }
      return START_NOT_STICKY;
    }
    if (started) return START_NOT_STICKY; // one worker per service; stop it first
    String hub = intent == null ? null : intent.getStringExtra(EXTRA_HUB);
    if (hub == null || hub.isEmpty()) {
      finish("no hub address: start with --es hub HOST[:PORT]");
      return START_NOT_STICKY;
    }
    String name = intent.getStringExtra(EXTRA_NAME);
    final WorkerConfig config = WorkerConfig.builder(hub)
        .token(intent.getStringExtra(EXTRA_TOKEN))
        .device(intent.getStringExtra(EXTRA_DEVICE))
        .name(name != null ? name : Build.MODEL)
        .threads(intent.getIntExtra(EXTRA_THREADS, 0))
        .minBatteryPercent(intent.getIntExtra(EXTRA_MIN_BATTERY, 0))
        .requireCharging(intent.getBooleanExtra(EXTRA_REQUIRE_CHARGING, true))
        .requireUnmetered(intent.getBooleanExtra(EXTRA_REQUIRE_UNMETERED, true))
        .dataDir(dataDir(intent.getStringExtra(EXTRA_DATA)))
        .readSystemDeviceState(false) // this service feeds the state
        .hubFingerprint(intent.getStringExtra(EXTRA_HUB_FINGERPRINT))
        .insecure(intent.getBooleanExtra(EXTRA_INSECURE, false))
        .stateDir(getFilesDir().getAbsolutePath()) // known_hubs: private to the app
        .memoryBudgetBytes(memoryBudget())
        .build();
    started = true;
    // The sticky battery broadcast comes back at once: the state is known before the worker starts.
    onBattery(registerReceiver(batteryReceiver, new IntentFilter(Intent.ACTION_BATTERY_CHANGED)));
    connectivity.registerDefaultNetworkCallback(networkCallback);
    PowerManager power = getSystemService(PowerManager.class);
    wakeLock = power.newWakeLock(PowerManager.PARTIAL_WAKE_LOCK, "mt:training");
    wakeLock.acquire(TimeUnit.HOURS.toMillis(24));
    calls.execute(() -> {
      try {
        controller.start(config);
      } catch (RuntimeException e) { // IllegalArgumentException: a bad hub address etc.
        final String message = e.getMessage();
        main.post(() -> finish("cannot start: " + message));
      }
    });
    return START_NOT_STICKY;
  }

  @Override
  public void onDestroy() {
    finished = true; // late status and network posts are dropped
    if (started) {
      unregisterReceiver(batteryReceiver);
      try {
        connectivity.unregisterNetworkCallback(networkCallback);
      } catch (IllegalArgumentException e) {
        // never registered
      }
    }
    if (wakeLock != null && wakeLock.isHeld()) wakeLock.release();
    final WorkerController c = controller;
    calls.execute(c::close); // leaves the run if still in it; off the main thread
    calls.shutdown();
    super.onDestroy();
  }

  @Override
  public IBinder onBind(Intent intent) {
    return null;
  }

  // Workers read their samples locally: push them to the device (docs/android.md).
  private String dataDir(String given) {
    if (given != null && !given.isEmpty()) return given;
    java.io.File external = getExternalFilesDir(null);
    java.io.File dataset = external == null ? null : new java.io.File(external, "dataset");
    return dataset != null && dataset.isDirectory() ? dataset.getAbsolutePath() : null;
  }

  private void onBattery(Intent battery) {
    if (battery == null) return;
    int level = battery.getIntExtra(BatteryManager.EXTRA_LEVEL, -1);
    int scale = battery.getIntExtra(BatteryManager.EXTRA_SCALE, -1);
    int percent = level >= 0 && scale > 0 ? level * 100 / scale : -1;
    boolean present = battery.getBooleanExtra(BatteryManager.EXTRA_PRESENT, true);
    Boolean charging = battery.hasExtra(BatteryManager.EXTRA_PLUGGED)
        ? battery.getIntExtra(BatteryManager.EXTRA_PLUGGED, 0) != 0 : null;
    int tenths = battery.getIntExtra(BatteryManager.EXTRA_TEMPERATURE, Integer.MIN_VALUE);
    double celsius = tenths == Integer.MIN_VALUE ? Double.NaN : tenths / 10.0;
    updateDeviceState(deviceState.withBattery(present ? percent : -1, charging).withTemperature(celsius));
  }

  private void updateDeviceState(DeviceState state) {
    if (finished || state.equals(deviceState)) return;
    deviceState = state;
    calls.execute(() -> controller.onDeviceStateChanged(state));
  }

  private void onStatus(WorkerStatus status) {
    if (finished) return;
    if (status.state.isEnded()) {
      finish(status.state == WorkerStatus.State.FAILED ? "failed: " + status.lastError
                                                        : "stopped at step " + status.step + ": " + status.stopReason);
    } else {
      notifications.notify(NOTIFICATION_ID, notification(status.summary(), true));
    }
  }

  private String currentText() {
    WorkerStatus s = controller.lastStatus();
    return s == null ? "starting" : s.summary();
  }

  // Leaves the last text in a notification that outlives the service, and stops.
  private void finish(String text) {
    if (finished) return;
    finished = true;
    stopForeground(STOP_FOREGROUND_DETACH);
    notifications.notify(NOTIFICATION_ID, notification(text, false));
    stopSelf();
  }

  private Notification notification(String text, boolean running) {
    Notification.Builder b = new Notification.Builder(this, CHANNEL_ID)
        .setSmallIcon(android.R.drawable.stat_notify_sync)
        .setContentTitle("mt worker")
        .setContentText(text)
        .setOnlyAlertOnce(true)
        .setOngoing(running);
    if (running) {
      Intent stop = new Intent(this, MtWorkerService.class).setAction(ACTION_STOP);
      PendingIntent pi = PendingIntent.getService(this, 0, stop, PendingIntent.FLAG_IMMUTABLE);
      b.addAction(new Notification.Action.Builder((android.graphics.drawable.Icon) null, "Stop", pi).build());
    }
    return b.build();
  }
}
