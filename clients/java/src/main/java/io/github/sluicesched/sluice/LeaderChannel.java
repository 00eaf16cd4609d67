package io.github.sluicesched.sluice;

import com.google.rpc.ErrorInfo;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import sluice.v1.Errors.ErrorReason;

/**
 * The channel behind a {@link SluiceClient}'s stubs: it follows the leader of a replicated
 * server, as the Go client's leaderConn does. Calls go to the current member. A unary call
 * that a follower refuses with NOT_LEADER naming the leader is sent again to the leader (a
 * refused call did nothing), at most {@value #MAX_LEADER_HOPS} times, and later calls go
 * there too. A call that fails with UNAVAILABLE because the member is unreachable (no
 * ErrorInfo of domain {@value SluiceErrors#DOMAIN}), or because it answered
 * STORE_UNAVAILABLE or STALE_READ_REFUSED, makes later calls go to the next member; that
 * call's error reaches the caller (it may have taken effect). Streams are never sent again:
 * their errors move later calls only.
 *
 * <p>It also keeps the client's read-your-writes floor ({@link RevisionFloor}): a unary call
 * that succeeds raises its cluster's floor to the revision its response carries, and a stale
 * read (a unary call's or a server stream's request whose {@code read} asks for
 * READ_CONSISTENCY_STALE and leaves min_revision 0) is sent with min_revision set to that
 * floor, so the raw stubs read their own writes on any member too.
 */
final class LeaderChannel extends ManagedChannel {
  /** How often one call follows a NOT_LEADER answer to another member. */
  static final int MAX_LEADER_HOPS = 3;

  private final Function<String, ManagedChannel> dial;
  private final List<String> members;
  private final RevisionFloor floor = new RevisionFloor();

  private final Object lock = new Object();
  private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();
  private ManagedChannel current;
  private String currentTarget;
  private boolean shutdown;

  /**
   * A channel to target (opened at once, as dial does), then to the other members or
   * leaders that dial opens when calls move there.
   */
  LeaderChannel(String target, List<String> endpoints, Function<String, ManagedChannel> dial) {
    LinkedHashSet<String> m = new LinkedHashSet<>();
    m.add(target);
    m.addAll(endpoints);
    this.members = List.copyOf(m);
    this.dial = dial;
    this.current = dial.apply(target);
    this.currentTarget = target;
    channels.put(target, current);
  }

  /** The members: the target, then the endpoints, without repeats. */
  List<String> members() {
    return members;
  }

  /** The client's read-your-writes floor. */
  RevisionFloor floor() {
    return floor;
  }

  /** The address calls go to now. */
  String currentTarget() {
    synchronized (lock) {
      return currentTarget;
    }
  }

  /** The channel calls go to now. */
  ManagedChannel current() {
    synchronized (lock) {
      return current;
    }
  }

  /**
   * Looks at a call made on from that failed with status: a NOT_LEADER answer naming a
   * leader moves the calls there, and observe returns true (the call may be sent again); an
   * unreachable member, or one that answered STORE_UNAVAILABLE or STALE_READ_REFUSED, moves
   * them to the next member.
   */
  boolean observe(ManagedChannel from, Status status, Metadata trailers) {
    if (status.getCode() != Status.Code.UNAVAILABLE) {
      return false;
    }
    Optional<ErrorInfo> info = SluiceErrors.errorInfo(status.asRuntimeException(trailers));
    Optional<String> leader = info.flatMap(SluiceErrors::leaderIn);
    if (leader.isPresent()) {
      return moveTo(from, leader.get());
    }
    // No ErrorInfo: the member did not answer (unreachable). A member that knows no leader,
    // or is too far behind, names none: another member may serve the next call.
    boolean anotherMay = info.map(SluiceErrors::reason)
        .map(r -> r == ErrorReason.ERROR_REASON_STORE_UNAVAILABLE || r == ErrorReason.ERROR_REASON_STALE_READ_REFUSED)
        .orElse(true);
    if (anotherMay && members.size() > 1) {
      String next;
      synchronized (lock) {
        int i = members.indexOf(currentTarget);
        next = members.get((i + 1) % members.size()); // a leader not among them: the first
      }
      moveTo(from, next);
    }
    return false;
  }

  /**
   * Makes target the current member, unless another call moved away from from already (then
   * this one follows it). Returns whether calls now go to target or where another call sent
   * them.
   */
  private boolean moveTo(ManagedChannel from, String target) {
    synchronized (lock) {
      if (shutdown) {
        return false;
      }
      if (currentTarget.equals(target) || current != from) {
        return true;
      }
      ManagedChannel ch = channels.get(target);
      if (ch == null) {
        try {
          ch = dial.apply(target);
        } catch (RuntimeException e) {
          return false; // a leader address this client cannot dial: stay
        }
        channels.put(target, ch);
      }
      current = ch;
      currentTarget = target;
      return true;
    }
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions callOptions) {
    return new FollowingCall<>(method, callOptions);
  }

  @Override
  public String authority() {
    return current().authority();
  }

  @Override
  public ManagedChannel shutdown() {
    synchronized (lock) {
      shutdown = true; // no channel opens after this
    }
    opened().forEach(ManagedChannel::shutdown);
    return this;
  }

  @Override
  public ManagedChannel shutdownNow() {
    synchronized (lock) {
      shutdown = true;
    }
    opened().forEach(ManagedChannel::shutdownNow);
    return this;
  }

  /** Every channel this one opened. */
  private List<ManagedChannel> opened() {
    synchronized (lock) {
      return new ArrayList<>(channels.values());
    }
  }

  @Override
  public boolean isShutdown() {
    synchronized (lock) {
      return shutdown;
    }
  }

  @Override
  public boolean isTerminated() {
    synchronized (lock) {
      return shutdown && channels.values().stream().allMatch(ManagedChannel::isTerminated);
    }
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long end = System.nanoTime() + unit.toNanos(timeout);
    for (ManagedChannel ch : opened()) {
      if (!ch.awaitTermination(end - System.nanoTime(), TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    return true;
  }

  /**
   * A call on the current member's channel that reports its failure to {@link #observe}. A
   * unary call keeps its request and headers: when a follower refuses it with NOT_LEADER
   * before any response reached the caller, it is sent again on the leader's channel, the
   * caller seeing only the last attempt.
   */
  private final class FollowingCall<Q, R> extends ClientCall<Q, R> {
    private final MethodDescriptor<Q, R> method;
    private final CallOptions options;

    // The attempt under way and what to replay on the next; guarded by this.
    private ManagedChannel channel;
    private ClientCall<Q, R> call;
    private Listener<R> listener;
    private Metadata headers;
    private Q message;
    private int requested;
    private Boolean compression;
    private boolean halfClosed;
    private boolean cancelled;
    private boolean answered;
    private int hops;

    FollowingCall(MethodDescriptor<Q, R> method, CallOptions options) {
      this.method = method;
      this.options = options;
      this.channel = current();
      this.call = channel.newCall(method, options);
    }

    @Override
    public synchronized void start(Listener<R> listener, Metadata headers) {
      this.listener = listener;
      this.headers = copy(headers); // the channel's interceptors add to the one they get
      call.start(new Attempt(channel), headers);
    }

    @Override
    public synchronized void request(int numMessages) {
      requested += numMessages;
      call.request(numMessages);
    }

    @Override
    public synchronized void cancel(String message, Throwable cause) {
      cancelled = true;
      call.cancel(message, cause);
    }

    @Override
    public synchronized void halfClose() {
      halfClosed = true;
      call.halfClose();
    }

    @Override
    public synchronized void sendMessage(Q message) {
      MethodDescriptor.MethodType type = method.getType();
      if (type == MethodDescriptor.MethodType.UNARY || type == MethodDescriptor.MethodType.SERVER_STREAMING) {
        message = floor.apply(message); // a stale read carries the floor as min_revision
      }
      if (type == MethodDescriptor.MethodType.UNARY) {
        this.message = message;
      }
      call.sendMessage(message);
    }

    @Override
    public synchronized boolean isReady() {
      return call.isReady();
    }

    @Override
    public synchronized void setMessageCompression(boolean enabled) {
      compression = enabled;
      call.setMessageCompression(enabled);
    }

    @Override
    public synchronized Attributes getAttributes() {
      return call.getAttributes();
    }

    /**
     * Sends the call again on the current member's channel, if it is a unary call sent whole,
     * not cancelled, not past its deadline, not answered yet, and within the hop limit.
     */
    private synchronized boolean resend() {
      if (method.getType() != MethodDescriptor.MethodType.UNARY || !halfClosed || message == null
          || cancelled || answered || hops >= MAX_LEADER_HOPS
          || (options.getDeadline() != null && options.getDeadline().isExpired())) {
        return false;
      }
      hops++;
      channel = current();
      call = channel.newCall(method, options);
      call.start(new Attempt(channel), copy(headers));
      if (compression != null) {
        call.setMessageCompression(compression);
      }
      if (requested > 0) {
        call.request(requested);
      }
      call.sendMessage(message);
      call.halfClose();
      return true;
    }

    private synchronized void answered() {
      answered = true;
    }

    /** The unary request sent, as sent (with the floor applied); null for other calls. */
    private synchronized Q sent() {
      return message;
    }

    /**
     * Hands one attempt's events to the caller, except a failure that is sent again. A unary
     * call's response headers wait for its message or its end, so that the caller never sees
     * the headers of an attempt that is sent again.
     */
    private final class Attempt extends Listener<R> {
      private final ManagedChannel on;
      private final boolean unary = method.getType() == MethodDescriptor.MethodType.UNARY;
      private Metadata pendingHeaders;
      private R response; // a unary call's, for the floor

      Attempt(ManagedChannel on) {
        this.on = on;
      }

      @Override
      public void onHeaders(Metadata h) {
        if (unary) {
          pendingHeaders = h;
        } else {
          answered();
          listener.onHeaders(h);
        }
      }

      @Override
      public void onMessage(R m) {
        answered();
        if (unary) {
          response = m;
        }
        flushHeaders();
        listener.onMessage(m);
      }

      @Override
      public void onReady() {
        listener.onReady();
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (!status.isOk() && observe(on, status, trailers) && resend()) {
          return;
        }
        if (status.isOk() && response != null) {
          floor.note(sent(), response); // before the caller sees the answer
        }
        flushHeaders();
        listener.onClose(status, trailers);
      }

      private void flushHeaders() {
        if (pendingHeaders != null) {
          listener.onHeaders(pendingHeaders);
          pendingHeaders = null;
        }
      }
    }
  }

  private static Metadata copy(Metadata m) {
    Metadata c = new Metadata();
    c.merge(m);
    return c;
  }
}
