package io.github.sluicesched.sluice;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
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
    String reason = errorInfo(t).map(ErrorInfo::getReason).orElse("");
    if (reason.isEmpty()) {
      return ErrorReason.ERROR_REASON_UNSPECIFIED;
    }
    try {
      return ErrorReason.valueOf(PREFIX + reason);
    } catch (IllegalArgumentException e) {
      return ErrorReason.UNRECOGNIZED;
    }
  }
}
