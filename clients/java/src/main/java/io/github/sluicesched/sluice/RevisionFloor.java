package io.github.sluicesched.sluice;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.HashMap;
import java.util.Map;
import sluice.v1.Reads.ReadConsistency;
import sluice.v1.Reads.ReadOptions;

/**
 * A client's read-your-writes floor, as the Go client's revisionFloor: per cluster, the
 * highest revision a call of this client saw (a write's acknowledgement, or a read's answer).
 * A stale read it makes later, on any member, carries it as min_revision, so the client reads
 * its own writes and never goes back in time. Linearizable reads need no floor. Safe to share
 * between threads. It works on any request and response by protobuf reflection: a request's
 * string field "cluster", a response's uint64 field "revision", a request's field "read" of
 * type sluice.v1.ReadOptions.
 */
final class RevisionFloor {
  private final Map<String, Long> floors = new HashMap<>();

  /** Raises the request's cluster's floor to the revision the response carries, if higher. */
  void note(Object request, Object response) {
    String cluster = stringField(request, "cluster");
    if (cluster == null || cluster.isEmpty() || !(response instanceof Message)) {
      return;
    }
    Message m = (Message) response;
    FieldDescriptor fd = m.getDescriptorForType().findFieldByName("revision");
    if (fd == null || fd.getType() != FieldDescriptor.Type.UINT64 || fd.isRepeated()) {
      return;
    }
    long revision = (Long) m.getField(fd);
    synchronized (floors) {
      // Revisions are uint64: compare them unsigned.
      floors.merge(cluster, revision, (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b);
    }
  }

  /** The cluster's floor, 0 if none. */
  long floor(String cluster) {
    synchronized (floors) {
      return floors.getOrDefault(cluster, 0L);
    }
  }

  /**
   * Returns request with read.min_revision set to its cluster's floor when it is a stale read
   * that left min_revision unset (0) and the floor is above 0; otherwise request itself. The
   * caller's message is never changed: the result is a copy.
   */
  @SuppressWarnings("unchecked")
  <Q> Q apply(Q request) {
    if (!(request instanceof Message)) {
      return request;
    }
    Message m = (Message) request;
    FieldDescriptor fd = m.getDescriptorForType().findFieldByName("read");
    if (fd == null || fd.getJavaType() != FieldDescriptor.JavaType.MESSAGE || fd.isRepeated()
        || !fd.getMessageType().getFullName().equals(ReadOptions.getDescriptor().getFullName())
        || !m.hasField(fd) || !(m.getField(fd) instanceof ReadOptions)) {
      return request;
    }
    ReadOptions read = (ReadOptions) m.getField(fd);
    if (read.getConsistency() != ReadConsistency.READ_CONSISTENCY_STALE || read.getMinRevision() != 0) {
      return request;
    }
    String cluster = stringField(request, "cluster");
    long floor = floor(cluster == null ? "" : cluster);
    if (floor == 0) {
      return request;
    }
    return (Q) m.toBuilder().setField(fd, read.toBuilder().setMinRevision(floor).build()).build();
  }

  /** A message's string field by name, or null if it has none. */
  private static String stringField(Object message, String name) {
    if (!(message instanceof Message)) {
      return null;
    }
    Message m = (Message) message;
    FieldDescriptor fd = m.getDescriptorForType().findFieldByName(name);
    if (fd == null || fd.getType() != FieldDescriptor.Type.STRING || fd.isRepeated()) {
      return null;
    }
    return (String) m.getField(fd);
  }
}
