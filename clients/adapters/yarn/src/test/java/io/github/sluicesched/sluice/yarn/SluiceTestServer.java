package io.github.sluicesched.sluice.yarn;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.sluicesched.sluice.SluiceClient;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the real sluiced of the tests is: the system property sluice.server or the environment
 * variable SLUICE_SERVER ("127.0.0.1:PORT", plaintext, no credentials), which run-tests.sh
 * sets after starting one on loopback. Without either the tests that need a server are
 * skipped, unless SLUICE_REQUIRE_SERVERS=1 (set by run-tests.sh), when they fail.
 */
final class SluiceTestServer {
  private static final AtomicInteger SEQ = new AtomicInteger();

  private SluiceTestServer() {}

  static String address() {
    String a = System.getProperty("sluice.server");
    if (a == null || a.isEmpty()) {
      a = System.getenv("SLUICE_SERVER");
    }
    if (a == null || a.isEmpty()) {
      if ("1".equals(System.getenv("SLUICE_REQUIRE_SERVERS"))) {
        fail("SLUICE_REQUIRE_SERVERS=1 but neither -Dsluice.server nor SLUICE_SERVER names a sluiced");
      }
      assumeTrue(false, "no sluiced: set SLUICE_SERVER=HOST:PORT (run-tests.sh starts one)");
    }
    return a;
  }

  /** A client for a cluster of its own, named after the test (valid cluster name). */
  static SluiceClient client(String testName) throws IOException {
    String base = testName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
    if (base.length() > 40) {
      base = base.substring(0, 40);
    }
    String cluster = "yarn-" + base + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
    return SluiceClient.builder(address()).cluster(cluster).plaintext().timeoutMillis(20_000).build();
  }
}
