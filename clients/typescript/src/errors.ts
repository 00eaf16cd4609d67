// The reason of a failed call: the google.rpc.ErrorInfo detail every Sluice error carries.
//
// The server attaches a google.rpc.Status to each error status with an ErrorInfo of domain
// "sluice.sched" whose reason is a sluice.v1.ErrorReason name without its "ERROR_REASON_"
// prefix, for example "PLAN_EXPIRED". Connect decodes the Status into ConnectError.details;
// ErrorInfo's descriptor is declared here (protobuf-es ships only google.protobuf's types),
// in a registry of its own.

import { create, createFileRegistry, type DescMessage, type Message } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";

import { ErrorReason } from "./gen/sluice/v1/errors_pb.js";

/** Domain of the ErrorInfo detail of Sluice's errors. */
export const ERROR_DOMAIN = "sluice.sched";

/** A google.rpc.ErrorInfo: why a call failed, as a machine reads it. */
export interface ErrorInfo {
  /** An ErrorReason name without its prefix, for example "PLAN_EXPIRED". */
  reason: string;
  /** "sluice.sched" for Sluice's errors. */
  domain: string;
  /** More about the error, for example "leader" (the leader's address) of NOT_LEADER. */
  metadata: Record<string, string>;
}

/**
 * google.rpc.ErrorInfo, as googleapis' google/rpc/error_details.proto declares it: what
 * ConnectError.findDetails takes (the package's tests make errors with it).
 */
export const ErrorInfoSchema: DescMessage = (() => {
  const str = (name: string, number: number) => ({
    name, number, jsonName: name, type: Type.STRING, label: Label.OPTIONAL,
  });
  const file = create(FileDescriptorProtoSchema, {
    name: "sluice/client/google_rpc_error_info.proto",
    package: "google.rpc",
    syntax: "proto3",
    messageType: [
      {
        name: "ErrorInfo",
        field: [
          str("reason", 1),
          str("domain", 2),
          {
            name: "metadata", number: 3, jsonName: "metadata", type: Type.MESSAGE, label: Label.REPEATED,
            typeName: ".google.rpc.ErrorInfo.MetadataEntry",
          },
        ],
        nestedType: [{ name: "MetadataEntry", field: [str("key", 1), str("value", 2)], options: { mapEntry: true } }],
      },
    ],
  });
  const desc = createFileRegistry(file, () => undefined).getMessage("google.rpc.ErrorInfo");
  if (!desc) throw new Error("sluice: cannot declare google.rpc.ErrorInfo");
  return desc;
})();

/**
 * The ErrorInfo of domain "sluice.sched" that a failed call's error (a ConnectError)
 * carries; undefined when it has none (not an RPC error, or not from a Sluice server).
 */
export function errorInfo(err: unknown): ErrorInfo | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  for (const m of err.findDetails(ErrorInfoSchema) as (Message & Partial<ErrorInfo>)[]) {
    if (m.domain === ERROR_DOMAIN) {
      return { reason: m.reason ?? "", domain: m.domain, metadata: { ...(m.metadata ?? {}) } };
    }
  }
  return undefined;
}

/**
 * The reason of a failed call, for example ErrorReason.PLAN_DISCARDED or
 * ErrorReason.PLAN_EXPIRED. ErrorReason.UNSPECIFIED (0) when the error carries no reason,
 * or one this client does not know yet (a newer server's: errorInfo(err).reason names it;
 * treat it by err.code).
 */
export function errorReason(err: unknown): ErrorReason {
  const reason = errorInfo(err)?.reason;
  if (!reason) return ErrorReason.UNSPECIFIED;
  const value = (ErrorReason as unknown as Record<string, unknown>)[reason];
  return typeof value === "number" ? (value as ErrorReason) : ErrorReason.UNSPECIFIED;
}
