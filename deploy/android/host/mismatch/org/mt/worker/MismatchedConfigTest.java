package org.mt.worker;

/**
 * The bridge built for one WorkerConfig, loaded with another (a field missing, one retyped):
 * start throws IllegalStateException naming both fields, and the JVM and the bridge keep working.
 * Plain Java: exit 0 pass, 1 fail.
 *
 * <p>java -Xcheck:jni -Djava.library.path=DIR -cp mtworker-mismatch-test.jar
 * org.mt.worker.MismatchedConfigTest
 */
public final class MismatchedConfigTest {
  public static void main(String[] args) {
    int failures = 0;
    for (int attempt = 1; attempt <= 2; ++attempt) { // the second start sees the same cached verdict
      try {
        long h = NativeWorker.start(new WorkerConfig());
        NativeWorker.free(h);
        System.out.println("FAIL start " + attempt + ": a mismatched WorkerConfig started a worker");
        ++failures;
      } catch (IllegalStateException e) {
        String m = e.getMessage();
        boolean names = m.contains("String hub") && m.contains("int threads") && !m.contains("String name");
        System.out.println((names ? "ok   " : "FAIL ") + "start " + attempt + " throws " + e);
        if (!names) ++failures;
      } catch (Throwable t) {
        System.out.println("FAIL start " + attempt + ": expected IllegalStateException, got " + t);
        ++failures;
      }
    }
    try {
      NativeWorker.poll(0L);
      System.out.println("FAIL poll of handle 0 did not throw");
      ++failures;
    } catch (IllegalStateException e) {
      System.out.println("ok   the bridge still answers: " + e.getMessage());
    }
    System.out.println(failures == 0 ? "PASSED" : "FAILED: " + failures + " check(s)");
    System.exit(failures == 0 ? 0 : 1);
  }
}
