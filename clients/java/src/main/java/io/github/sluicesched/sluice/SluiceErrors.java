package io.github.sluicesched.sluice;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Optional;
import sluice.v1.Errors.ErrorReason;

/**
 * The reason of a failed call: the {@code google.rpc.ErrorInfo} detail every Sluice error
 * carries, with domain {@value #DOMAIN} and, as its reason, an {@link ErrorReason} name
 * without its {@code ERROR_REASON_} prefix (for example {@code "PLAN_EXPIRED"}). Programs
 * switch on the reason, never on the message:
 *
 * <pre>{@code
 * try {
 *   c.commit(plan);
 * } catch (StatusRuntimeException e) {
 *   if (SluiceErrors.reason(e) != ErrorReason.ERROR_REASON_PLAN_EXPIRED) {
 *     throw e;
 *   }
 *   // the plan expired: schedule again
 * }
 * }</pre>
 */
public final class SluiceErrors {
  /** Domain of the ErrorInfo detail of Sluice's errors. */
  public static final String DOMAIN = "sluice.sched";

  /** Metadata key of a NOT_LEADER error's ErrorInfo: the leader's gRPC address, when known. */
  public static final String METADATA_LEADER = "leader";

  private static final String PREFIX = "ERROR_REASON_";

  private SluiceErrors() {}

  /**
   * The ErrorInfo of domain {@value #DOMAIN} that a failed call's exception (a {@link
   * io.grpc.StatusRuntimeException} or {@link io.grpc.StatusException}, or an exception caused
   * by one) carries: reason, domain and metadata (for example "leader", the leader's address
   * of a NOT_LEADER error). Empty when it carries none (not an RPC error, or not from a Sluice
   * server).
   */
  public static Optional<ErrorInfo> errorInfo(Throwable t) {
    com.google.rpc.Status status = t == null ? null : StatusProto.fromThrowable(t);
    if (status == null) {
      return Optional.empty();
    }
    for (Any detail : status.getDetailsList()) {
      if (!detail.is(ErrorInfo.class)) {
        continue;
      }
      try {
        ErrorInfo info = detail.unpack(ErrorInfo.class);
        if (DOMAIN.equals(info.getDomain())) {
          return Optional.of(info);
        }
      } catch (InvalidProtocolBufferException e) {
        // A detail that does not parse says nothing.
      }
    }
    return Optional.empty();
  }

  /**
   * The reason of a failed call, for example {@code ERROR_REASON_PLAN_DISCARDED} or {@code
   * ERROR_REASON_PLAN_EXPIRED}. {@code ERROR_REASON_UNSPECIFIED} when the exception carries
   * none; {@code UNRECOGNIZED} for a reason this client does not know yet (a newer server's:
   * {@link #errorInfo} names it; treat it by its status code).
   */
  public static ErrorReason reason(Throwable t) {
    return errorInfo(t).map(SluiceErrors::reason).orElse(ErrorReason.ERROR_REASON_UNSPECIFIED);
  }

  /** An ErrorInfo's reason as an ErrorReason (see {@link #reason(Throwable)}). */
  static ErrorReason reason(ErrorInfo info) {
    if (info.getReason().isEmpty()) {
      return ErrorReason.ERROR_REASON_UNSPECIFIED;
    }
    try {
      return ErrorReason.valueOf(PREFIX + info.getReason());
    } catch (IllegalArgumentException e) {
      return ErrorReason.UNRECOGNIZED;
    }
  }

  /**
   * The leader's address ("host:port") that a NOT_LEADER error of a replicated server names:
   * a follower refused a write, which did nothing and may be sent to the leader. Empty for
   * any other exception, and for a NOT_LEADER error from a member that knows no leader.
   * {@link SluiceClient} follows the leader itself; see its "Replicated servers" section.
   */
  public static Optional<String> leader(Throwable t) {
    if (!(t instanceof StatusRuntimeException || t instanceof StatusException)
        || Status.fromThrowable(t).getCode() != Status.Code.UNAVAILABLE) {
      return Optional.empty();
    }
    return errorInfo(t).flatMap(SluiceErrors::leaderIn);
  }

  /** The leader a NOT_LEADER ErrorInfo names, if any. */
  static Optional<String> leaderIn(ErrorInfo info) {
    if (reason(info) != ErrorReason.ERROR_REASON_NOT_LEADER) {
      return Optional.empty();
    }
    String addr = info.getMetadataOrDefault(METADATA_LEADER, "");
    return addr.isEmpty() ? Optional.empty() : Optional.of(addr);
  }
}
