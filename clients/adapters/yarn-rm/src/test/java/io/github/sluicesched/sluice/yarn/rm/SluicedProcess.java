package io.github.sluicesched.sluice.yarn.rm;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A real sluiced (in-memory, plaintext) on loopback ports chosen once, so that it can be
 * stopped and started again at the same address: what a restart without persisted state looks
 * like to the ResourceManager. The binary comes from SLUICED_BIN (run-tests.sh builds it).
 */
final class SluicedProcess implements AutoCloseable {
  private final String binary;
  private final int grpcPort;
  private final int adminPort;
  private final Path log;
  private Process process;
  private int starts;
  private boolean hooked;

  SluicedProcess(String binary, Path logDir) throws IOException {
    this.binary = binary;
    int[] ports = freePorts(2);
    this.grpcPort = ports[0];
    this.adminPort = ports[1];
    Files.createDirectories(logDir);
    this.log = logDir.resolve("sluiced.log");
  }

  /** SLUICED_BIN, or null when the tests run without one. */
  static String binaryFromEnv() {
    String b = System.getenv("SLUICED_BIN");
    if (b == null || b.isEmpty()) {
      b = System.getProperty("sluiced.bin");
    }
    return b == null || b.isEmpty() || !new File(b).canExecute() ? null : b;
  }

  String address() {
    return "127.0.0.1:" + grpcPort;
  }

  Path log() {
    return log;
  }

  synchronized void start() throws IOException, InterruptedException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("sluiced is running");
    }
    starts++;
    ProcessBuilder pb = new ProcessBuilder(binary, "--listen", "127.0.0.1:" + grpcPort, "--admin-listen",
        "127.0.0.1:" + adminPort, "--log-level", "warn");
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    process = pb.start();
    if (!hooked) {
      hooked = true;
      // A JVM that dies mid-test (a timeout, a kill) takes the server down with it.
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        Process cur = current();
        if (cur != null) {
          cur.destroyForcibly();
        }
      }));
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException("sluiced exited with " + process.exitValue() + "; see " + log);
      }
      if (healthy()) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IOException("sluiced did not become healthy in 30s; see " + log);
  }

  /** Stops the server (SIGTERM, then SIGKILL): its in-memory state is gone. */
  synchronized void stop() throws InterruptedException {
    if (process == null) {
      return;
    }
    process.destroy();
    if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    process = null;
  }

  private synchronized Process current() {
    return process;
  }

  synchronized int starts() {
    return starts;
  }

  private boolean healthy() {
    try {
      HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + adminPort + "/healthz").openConnection();
      c.setConnectTimeout(500);
      c.setReadTimeout(500);
      try {
        return c.getResponseCode() == 200;
      } finally {
        c.disconnect();
      }
    } catch (IOException e) {
      return false;
    }
  }

  /** n distinct free loopback ports: every socket stays open until the last is chosen. */
  private static int[] freePorts(int n) throws IOException {
    ServerSocket[] sockets = new ServerSocket[n];
    int[] ports = new int[n];
    try {
      for (int i = 0; i < n; i++) {
        sockets[i] = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        ports[i] = sockets[i].getLocalPort();
      }
    } finally {
      for (ServerSocket s : sockets) {
        if (s != null) {
          s.close();
        }
      }
    }
    return ports;
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
