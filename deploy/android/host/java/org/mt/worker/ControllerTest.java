package org.mt.worker;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * End to end on the host: a real mthub, a worker started through WorkerController -> NativeWorker
 * -> JNI -> the C API, training, status, device policy, a clean stop, and the exceptions an app
 * sees. Plain Java with its own checks (no JUnit): exit 0 pass, 1 fail, 2 bad usage.
 *
 * <p>java -Djava.library.path=DIR -cp mtworker.jar:mtworker-test.jar org.mt.worker.ControllerTest
 * PATH/TO/mthub [WORK_DIR]
 */
public final class ControllerTest {
  private static int failures;
  private static Path hubLog;

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: ControllerTest PATH/TO/mthub [WORK_DIR]");
      System.exit(2);
    }
    final Path hubBinary = Paths.get(args[0]);
    final boolean ownDir = args.length < 2;
    final Path dir = ownDir ? Files.createTempDirectory("mt-java-controller") : Paths.get(args[1]);
    Files.createDirectories(dir);
    hubLog = dir.resolve("hub.log");
    Process hub = null;
    try {
      badConfigurationsThrow();
      staleHandlesThrowInsteadOfCrashing();
      Path data = dir.resolve("data");
      writeIdxDataset(data, 1000, 100, 3);
      hub = startHub(hubBinary, dir, data);
      final Process hubProcess = hub;
      Runtime.getRuntime().addShutdownHook(new Thread(hubProcess::destroyForcibly));
      final String address = "127.0.0.1:" + readPort(dir.resolve("port"), hub);
      trainsReportsAndStopsCleanly(address, dir);
      leavesWhenTheDevicePolicySaysSo(address);
      concurrentCallsAndCloseAreSafe(address);
    } catch (Throwable t) {
      fail("unexpected " + t);
      t.printStackTrace();
    } finally {
      if (hub != null) {
        hub.destroy(); // SIGTERM: the hub says goodbye and exits
        if (!hub.waitFor(15, TimeUnit.SECONDS)) {
          hub.destroyForcibly();
          hub.waitFor(5, TimeUnit.SECONDS);
        }
      }
      if (failures > 0 && Files.exists(hubLog)) {
        System.err.println("---- hub log (" + hubLog + ") ----");
        System.err.println(readLog());
      }
      if (ownDir && failures == 0) deleteTree(dir);
    }
    if (failures > 0) {
      System.err.println("FAILED: " + failures + " check(s)");
      System.exit(1);
    }
    System.out.println("PASSED");
    System.exit(0);
  }

  // A bad configuration is an IllegalArgumentException at start, with the C API's reason.
  static void badConfigurationsThrow() {
    WorkerController c = new WorkerController();
    {
      IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("no-such-host.invalid:50051").build()), "unresolvable hub");
      check(e != null && e.getMessage().contains("cannot resolve 'no-such-host.invalid'"),
          "unresolvable hub: message names it: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1:99999").build()), "bad port");
      check(e != null && e.getMessage().contains("1..65535"), "bad port: message: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class, () -> c.start(WorkerConfig.builder(null).build()), "null hub");
      check(e != null && e.getMessage().equals("no hub address"), "null hub: message: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").device("tpu").build()), "bad device");
      check(e != null && e.getMessage().contains("tpu"), "bad device: message: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class, () -> c.start(WorkerConfig.builder("").build()), "empty hub");
      check(e != null && e.getMessage().equals("no hub address"), "empty hub: message: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").threads(-1).build()), "negative threads");
      check(e != null && e.getMessage().equals("threads must not be negative (0: 1)"),
          "negative threads: message: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").minBatteryPercent(101).build()), "battery above 100%");
      check(e != null && e.getMessage().contains("min_battery_percent"),
          "battery above 100%: message names the field: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").memoryBudgetBytes(-1).build()), "negative memory budget");
      check(e != null && e.getMessage().contains("memory_budget_bytes"),
          "negative memory budget: message names the field: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").hubFingerprint("SHA256:12:34").build()), "short fingerprint");
      check(e != null && e.getMessage().contains("SHA256:12:34"),
          "short fingerprint: message quotes it: " + (e == null ? null : e.getMessage()));
      e = expectThrows(IllegalArgumentException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").insecure(true).tlsCaPath("/etc/hostname").build()),
          "plaintext with a CA");
      check(e != null && e.getMessage().contains("insecure"),
          "plaintext with a CA: message says why: " + (e == null ? null : e.getMessage()));
      expectThrows(NullPointerException.class, () -> NativeWorker.start(null), "native start of a null config");
      expectThrows(IllegalStateException.class, c::status, "status before any start");
      check(c.stop(1), "stop with no worker is a no-op");
      c.close();
      c.close(); // idempotent
      expectThrows(IllegalStateException.class, c::status, "status after close");
      expectThrows(IllegalStateException.class,
          () -> c.start(WorkerConfig.builder("127.0.0.1").build()), "start after close");
    }
  }

  // Handles that were never started or are freed throw; the JVM does not crash.
  static void staleHandlesThrowInsteadOfCrashing() {
    expectThrows(IllegalStateException.class, () -> NativeWorker.poll(12345L), "poll of a made-up handle");
    expectThrows(IllegalStateException.class, () -> NativeWorker.poll(0L), "poll of handle 0");
    NativeWorker.free(0L); // fine, like mt_worker_free(NULL)
    long h = NativeWorker.start(WorkerConfig.builder("127.0.0.1:1").name("stale").connectTimeoutSeconds(1)
        .requireCharging(false).requireUnmetered(false).readSystemDeviceState(false).build());
    check(h != 0, "a worker for an unreachable hub starts (and fails later)");
    NativeWorker.free(h);
    expectThrows(IllegalStateException.class, () -> NativeWorker.poll(h), "poll after free");
    expectThrows(IllegalStateException.class, () -> NativeWorker.stop(h, 1), "stop after free");
    expectThrows(IllegalStateException.class, () -> NativeWorker.free(h), "double free");
    expectThrows(IllegalStateException.class, () -> NativeWorker.setDeviceState(h, DeviceState.unknown()),
        "set device state after free");
  }

  static void trainsReportsAndStopsCleanly(String address, Path dir) throws Exception {
    List<WorkerStatus> seen = new CopyOnWriteArrayList<>();
    Path report = dir.resolve("worker-report.json");
    try (WorkerController c = new WorkerController(seen::add, 50)) {
      // What an Android service feeds while charging on Wi-Fi: the default policy trains.
      c.onDeviceStateChanged(new DeviceState(80, true, true, 30.0));
      // Over TLS, remembering the hub in the app's own directory, as MtWorkerService does.
      c.start(WorkerConfig.builder(address).name("java-embedded").threads(2).connectTimeoutSeconds(30)
          .reportPath(report.toString()).readSystemDeviceState(false).stateDir(dir.toString()).build());
      WorkerStatus s = waitFor(c, x -> x.stepsTrained >= 5 && x.loss > 0 || x.state.isEnded(), 120);
      check(s.state == WorkerStatus.State.TRAINING, "training: " + s);
      check(s.stepsTrained >= 5, "trained at least 5 steps: " + s);
      check(s.step >= 4, "the hub's step is at least 4: " + s);
      check(s.loss > 0 && !Double.isNaN(s.loss), "loss is positive: " + s);
      check(s.batch > 0, "batch is positive: " + s);
      check(s.lastError.isEmpty() && s.stopReason.isEmpty(), "no error or stop reason while training: " + s);
      check(s.summary().startsWith("step " + s.step + ", loss "), "summary for a notification: " + s.summary());
      String known = new String(Files.readAllBytes(dir.resolve("known_hubs")), StandardCharsets.UTF_8);
      check(known.contains(address + " SHA256:"), "the hub's fingerprint remembered in stateDir: " + known);
      expectThrows(IllegalStateException.class,
          () -> c.start(WorkerConfig.builder(address).build()), "a second start while one runs");
      // The listener runs on its own 50 ms clock while status() answers at once, so a fast
      // worker can pass 5 steps before the first listener call: wait for it before stopping.
      check(waitUntil(() -> seen.stream().anyMatch(x -> x.state == WorkerStatus.State.TRAINING && x.stepsTrained > 0), 30),
          "the listener saw training");

      check(c.stop(30), "stop returns true (ended within the timeout)");
      WorkerStatus end = c.status();
      check(end.state == WorkerStatus.State.DONE, "DONE after stop: " + end);
      check(end.stopReason.equals("stopped by the app"), "stop reason: " + end.stopReason);
      check(waitForLog("(java-embedded) leaves: stopped by the app", 10), "the hub was told the worker leaves");
      // The bridge read reportPath and threads from the config by name.
      String json = Files.exists(report) ? new String(Files.readAllBytes(report), StandardCharsets.UTF_8) : "";
      check(json.matches("(?s).*\"threads\"\\s*:\\s*2\\b.*"), "the report at reportPath says threads 2: " + json);
      check(waitUntil(() -> !seen.isEmpty() && seen.get(seen.size() - 1).state.isEnded(), 10),
          "the listener got the ended status last");
      check(c.stop(1), "a second stop is fine");
    }
  }

  // The defaults train only while charging and unmetered; a low battery makes the worker leave.
  static void leavesWhenTheDevicePolicySaysSo(String address) throws Exception {
    try (WorkerController c = new WorkerController()) {
      WorkerConfig config = WorkerConfig.builder(address).name("java-battery").minBatteryPercent(20)
          .connectTimeoutSeconds(30).readSystemDeviceState(false).build();
      check(config.requireCharging && config.requireUnmetered, "defaults: charging and unmetered required");
      c.onDeviceStateChanged(new DeviceState(90, true, true, 30.0));
      c.start(config);
      WorkerStatus s = waitFor(c, x -> x.stepsTrained >= 3 || x.state.isEnded(), 120);
      check(s.state == WorkerStatus.State.TRAINING && s.stepsTrained >= 3, "trains while charging: " + s);
      c.onDeviceStateChanged(new DeviceState(10, false, true, 30.0));
      s = waitFor(c, x -> x.state.isEnded(), 60);
      check(s.state == WorkerStatus.State.DONE, "DONE on a low battery: " + s);
      check(s.stopReason.contains("battery at 10% and not charging"), "stop reason names the battery: " + s.stopReason);
      check(waitForLog("(java-battery) leaves: battery at 10%", 10), "the hub was told why");

      // The same controller starts a new worker once the last one has ended; on a metered
      // network the default policy makes it leave.
      c.onDeviceStateChanged(new DeviceState(90, true, false, 30.0));
      c.start(config.toBuilder().name("java-metered").build());
      s = waitFor(c, x -> x.state.isEnded(), 120);
      check(s.state == WorkerStatus.State.DONE, "DONE on a metered network: " + s);
      check(s.stopReason.contains("metered"), "stop reason names the network: " + s.stopReason);
      check(waitForLog("(java-metered) leaves: on a metered network", 10), "the hub was told why (metered)");
    }
  }

  // Threads polling and pushing state while another closes: only "closed" exceptions, no crash,
  // and close leaves the run (the hub is told).
  static void concurrentCallsAndCloseAreSafe(String address) throws Exception {
    WorkerController c = new WorkerController(s -> { }, 5);
    c.start(WorkerConfig.builder(address).name("java-concurrent").connectTimeoutSeconds(30)
        .readSystemDeviceState(false).build());
    WorkerStatus s = waitFor(c, x -> x.stepsTrained >= 2 || x.state.isEnded(), 120);
    check(s.state == WorkerStatus.State.TRAINING, "concurrent: training: " + s);
    List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    Thread[] threads = new Thread[4];
    for (int i = 0; i < threads.length; ++i) {
      final int battery = 50 + i;
      threads[i] = new Thread(() -> {
        try {
          for (long n = 0;; ++n) {
            c.status();
            c.onDeviceStateChanged(new DeviceState(battery, true, true, 30.0 + (n % 10)));
            c.lastStatus();
          }
        } catch (IllegalStateException e) {
          if (!e.getMessage().contains("closed")) unexpected.add(e);
        } catch (Throwable t) {
          unexpected.add(t);
        }
      });
      threads[i].start();
    }
    Thread.sleep(300);
    c.close();
    for (Thread t : threads) t.join(10_000);
    check(unexpected.isEmpty(), "concurrent: no unexpected exceptions: " + unexpected);
    check(java.util.Arrays.stream(threads).noneMatch(Thread::isAlive), "concurrent: every thread saw the close");
    check(waitForLog("(java-concurrent) leaves: stopped by the app", 10), "close tells the hub the worker leaves");
  }

  // ---- helpers ----

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  static void check(boolean ok, String what) {
    if (ok) {
      System.out.println("ok   " + what);
    } else {
      fail(what);
    }
  }

  static void fail(String what) {
    ++failures;
    System.out.println("FAIL " + what);
  }

  static <T extends Throwable> T expectThrows(Class<T> type, ThrowingRunnable body, String what) {
    try {
      body.run();
    } catch (Throwable t) {
      if (type.isInstance(t)) {
        System.out.println("ok   " + what + " throws " + t);
        return type.cast(t);
      }
      fail(what + ": expected " + type.getSimpleName() + ", got " + t);
      return null;
    }
    fail(what + ": expected " + type.getSimpleName() + ", nothing thrown");
    return null;
  }

  static boolean waitUntil(Condition c, double seconds) throws Exception {
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    while (!c.holds()) {
      if (System.nanoTime() > deadline) return false;
      Thread.sleep(20);
    }
    return true;
  }

  static WorkerStatus waitFor(WorkerController c, Predicate<WorkerStatus> done, double seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    WorkerStatus s = c.status();
    while (!done.test(s) && System.nanoTime() < deadline) {
      Thread.sleep(20);
      s = c.status();
    }
    return s;
  }

  static String readLog() {
    try {
      return new String(Files.readAllBytes(hubLog), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  static boolean waitForLog(String text, double seconds) throws Exception {
    return waitUntil(() -> readLog().contains(text), seconds);
  }

  static Process startHub(Path hubBinary, Path dir, Path data) throws IOException {
    Files.deleteIfExists(dir.resolve("port"));
    ProcessBuilder pb = new ProcessBuilder(hubBinary.toString(), "--workers", "1", "--bind", "127.0.0.1",
        "--port", "0", "--port-file", dir.resolve("port").toString(), "--steps", "100000",
        "--dataset", data.toString());
    pb.redirectErrorStream(true);
    pb.redirectOutput(hubLog.toFile());
    return pb.start();
  }

  static int readPort(Path portFile, Process hub) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (Files.exists(portFile)) {
        String text = new String(Files.readAllBytes(portFile), StandardCharsets.UTF_8).trim();
        if (!text.isEmpty()) return Integer.parseInt(text);
      }
      if (!hub.isAlive()) throw new IllegalStateException("mthub exited with " + hub.exitValue() + ":\n" + readLog());
      Thread.sleep(50);
    }
    throw new IllegalStateException("mthub wrote no port within 30 s:\n" + readLog());
  }

  // A small learnable IDX dataset like tests/support/idx_writer.h: 28x28, 10 classes, class k
  // lights a band of rows plus noise.
  static void writeIdxDataset(Path dir, int train, int test, long seed) throws IOException {
    Files.createDirectories(dir);
    writeIdxSplit(dir, "train", train, seed);
    writeIdxSplit(dir, "t10k", test, seed + 1);
  }

  static void writeIdxSplit(Path dir, String prefix, int n, long seed) throws IOException {
    Random rng = new Random(seed);
    try (DataOutputStream images = new DataOutputStream(out(dir.resolve(prefix + "-images-idx3-ubyte")));
        DataOutputStream labels = new DataOutputStream(out(dir.resolve(prefix + "-labels-idx1-ubyte")))) {
      images.writeInt(0x803); // big-endian, as IDX wants
      images.writeInt(n);
      images.writeInt(28);
      images.writeInt(28);
      labels.writeInt(0x801);
      labels.writeInt(n);
      byte[] img = new byte[28 * 28];
      for (int i = 0; i < n; ++i) {
        int label = rng.nextInt(10);
        for (int p = 0; p < img.length; ++p) {
          int row = p / 28;
          boolean band = row / 2 == label + 2 || row / 2 == label + 3;
          img[p] = (byte) ((band ? 170 : 40) + rng.nextInt(80));
        }
        images.write(img);
        labels.writeByte(label);
      }
    }
  }

  static OutputStream out(Path p) throws IOException {
    return new java.io.BufferedOutputStream(Files.newOutputStream(p));
  }

  static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }
}
