// Read-your-writes for stale reads: the revision floor a LeaderTransport keeps. It mirrors the
// Go client's revisionFloor (clients/go/sluice/ryw.go).

import { clone, ScalarType, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";

import { ReadConsistency, type ReadOptions } from "./gen/sluice/v1/reads_pb.js";

/**
 * Remembers, per cluster, the highest revision a call of this client saw (a write's
 * acknowledgement, or a read's answer), so that a stale read it makes later, on any member,
 * carries it as read.minRevision: the client reads its own writes and never goes back in
 * time. Linearizable reads need no floor. Fields are found by name on the messages'
 * descriptors, so every request and response of the API is covered without per-type code.
 */
export class RevisionFloor {
  private readonly floors = new Map<string, bigint>();

  /** The floor of cluster: 0n until a revision of it was seen. */
  get(cluster: string): bigint {
    return this.floors.get(cluster) ?? 0n;
  }

  /**
   * Raises the floor of the request's cluster (its string field "cluster", when not empty)
   * to the response's uint64 field "revision", if that is higher.
   */
  note<I extends DescMessage, O extends DescMessage>(
    input: I,
    request: MessageShape<I>,
    output: O,
    response: MessageShape<O>,
  ): void {
    const cluster = stringField(input, request, "cluster");
    if (!cluster) return;
    const f = fieldNamed(output, "revision");
    if (f?.fieldKind !== "scalar" || f.scalar !== ScalarType.UINT64) return;
    const rev = valueOf(response, f);
    if (typeof rev === "bigint" && rev > this.get(cluster)) this.floors.set(cluster, rev);
  }

  /**
   * The request with read.minRevision set to its cluster's floor when it is a stale read
   * (a set "read" field of type sluice.v1.ReadOptions, consistency STALE) that left
   * minRevision 0 and the floor is above 0: a copy, the request itself is never changed.
   * Otherwise the request itself.
   */
  apply<I extends DescMessage>(input: I, request: MessageShape<I>): MessageShape<I> {
    const f = fieldNamed(input, "read");
    if (f?.fieldKind !== "message" || f.message.typeName !== "sluice.v1.ReadOptions") return request;
    const read = valueOf(request, f) as ReadOptions | undefined;
    if (read === undefined || read.consistency !== ReadConsistency.STALE || read.minRevision !== 0n) return request;
    const floor = this.get(stringField(input, request, "cluster") ?? "");
    if (floor === 0n) return request;
    const copy = clone(input, request);
    (valueOf(copy, f) as ReadOptions).minRevision = floor;
    return copy;
  }
}

/** The field of desc whose proto name is name, unless it is in a oneof. */
function fieldNamed(desc: DescMessage, name: string): DescField | undefined {
  return desc.fields.find((f) => f.name === name && f.oneof === undefined);
}

/** The value of field f of msg (a field found by fieldNamed). */
function valueOf(msg: object, f: DescField): unknown {
  return (msg as Record<string, unknown>)[f.localName];
}

/** The string field name of msg, undefined when desc has none. */
function stringField(desc: DescMessage, msg: object, name: string): string | undefined {
  const f = fieldNamed(desc, name);
  if (f?.fieldKind !== "scalar" || f.scalar !== ScalarType.STRING) return undefined;
  const v = valueOf(msg, f);
  return typeof v === "string" ? v : undefined;
}
