// Leader following for replicated servers (sluiced --raft-peers): a Transport that sends
// each call to the member in use and moves to the leader, or to the next member, as the
// members' answers say. It mirrors the Go client's leaderConn (clients/go/sluice/leader.go).

import { create, type DescMessage, type DescMethodStreaming, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type StreamResponse, type Transport, type UnaryResponse } from "@connectrpc/connect";

import { errorInfo } from "./errors.js";
import { RevisionFloor } from "./ryw.js";

/** ErrorInfo reason of a write sent to a member that does not lead. */
export const REASON_NOT_LEADER = "NOT_LEADER";

/** ErrorInfo metadata key of a NOT_LEADER error holding the leader's gRPC address. */
export const METADATA_LEADER = "leader";

/**
 * Reasons of a member that cannot serve the call, whichever member it goes to: it knows no
 * leader (STORE_UNAVAILABLE) or is too far behind for a stale read (STALE_READ_REFUSED).
 * Later calls try the next member.
 */
const rotateReasons = new Set(["STORE_UNAVAILABLE", "STALE_READ_REFUSED"]);

/** A call's request headers, as Transport takes them (HeadersInit, not declared for Node's lib). */
type Header = Parameters<Transport["unary"]>[3];

/** How often one unary call follows a NOT_LEADER answer to another member. */
export const MAX_LEADER_HOPS = 3;

/**
 * The leader's address ("host:port") that a NOT_LEADER error names; undefined when err is
 * not one, or names no leader (none is known).
 */
export function leaderOf(err: unknown): string | undefined {
  if (!(err instanceof ConnectError) || err.code !== Code.Unavailable) return undefined;
  const info = errorInfo(err);
  if (info?.reason !== REASON_NOT_LEADER) return undefined;
  return info.metadata[METADATA_LEADER] || undefined;
}

/** A member's transport, and how to close what it opened. */
export interface Member {
  transport: Transport;
  close(): void;
}

/** Opens a transport to a member, given its URL ("http://host:port"). */
export type Dial = (url: string) => Member;

/**
 * The URL of a member: addr itself when it has a scheme ("https://host:port"), else
 * "scheme://addr".
 */
export function memberUrl(addr: string, scheme: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(addr) ? addr : `${scheme}://${addr}`;
}

/**
 * A Transport that follows the leader of a replicated server. Calls go to the current
 * member (at first the first of members). A unary call that a member refuses with
 * UNAVAILABLE and reason NOT_LEADER naming a leader is sent again to that leader (a
 * refused call did nothing), at most MAX_LEADER_HOPS times, and later calls go there too.
 * A call that fails with UNAVAILABLE because the member is unreachable (no Sluice
 * ErrorInfo), or because it answered STORE_UNAVAILABLE or STALE_READ_REFUSED, is not sent
 * again (it may have taken effect), but later calls go to the next member, round robin.
 * A stream that fails so moves later calls the same way; its error reaches the caller.
 * When another call already moved away from the member a failed call used, that call
 * follows it rather than moving again.
 *
 * Read your writes: the transport keeps a revision floor per cluster (see RevisionFloor), the
 * highest "revision" a successful unary call's response carried for its request's cluster. A
 * stale read (read.consistency STALE, read.minRevision 0), unary or a stream's request, is sent
 * as a copy with read.minRevision set to that floor, so whichever member answers it has
 * applied at least this client's writes and what it read before. Other requests go unchanged.
 */
export class LeaderTransport implements Transport {
  /** The members' URLs, deduplicated, in the order given. */
  readonly members: readonly string[];
  private readonly open = new Map<string, Member>();
  private currentUrl: string;
  private closed = false;
  private readonly floor = new RevisionFloor();

  /**
   * addrs are the members ("host:port" or URLs), the first being where calls go first;
   * an address without a scheme, and a leader's address, get scheme. dial opens a
   * transport to a member, once per member.
   */
  constructor(
    private readonly dial: Dial,
    addrs: string[],
    private readonly scheme: string,
  ) {
    if (addrs.length === 0) throw new Error("sluice: no member to connect to");
    this.members = [...new Set(addrs.map((a) => memberUrl(a, scheme)))];
    this.currentUrl = this.members[0];
    this.open.set(this.currentUrl, dial(this.currentUrl));
  }

  /** The URL of the member calls go to now. */
  get current(): string {
    return this.currentUrl;
  }

  private member(): Member {
    return this.open.get(this.currentUrl)!;
  }

  /** Implements Transport: see the class. */
  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: Header,
    input: MessageInitShape<I>,
    contextValues?: ContextValues,
  ): Promise<UnaryResponse<I, O>> {
    // The deadline covers every hop.
    const deadline = timeoutMs !== undefined && timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
    const request = this.floor.apply(method.input, create(method.input, input));
    for (let hop = 0; ; hop++) {
      const from = this.member();
      const left = deadline === undefined ? timeoutMs : Math.max(1, deadline - Date.now());
      try {
        const res = await from.transport.unary(method, signal, left, header, request, contextValues);
        this.floor.note(method.input, request, method.output, res.message);
        return res;
      } catch (err) {
        const expired = deadline !== undefined && Date.now() >= deadline;
        if (!this.observe(from, err) || hop >= MAX_LEADER_HOPS || signal?.aborted || expired) throw err;
      }
    }
  }

  /**
   * Implements Transport: see the class. Streams are never sent again; their requests get the
   * revision floor, their responses do not raise it.
   */
  async stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: Header,
    input: AsyncIterable<MessageInitShape<I>>,
    contextValues?: ContextValues,
  ): Promise<StreamResponse<I, O>> {
    const from = this.member();
    const floor = this.floor;
    async function* withFloor(): AsyncGenerator<MessageShape<I>> {
      for await (const m of input) yield floor.apply(method.input, create(method.input, m));
    }
    let res: StreamResponse<I, O>;
    try {
      res = await from.transport.stream(method, signal, timeoutMs, header, withFloor(), contextValues);
    } catch (err) {
      this.observe(from, err);
      throw err;
    }
    const observe = (err: unknown) => this.observe(from, err);
    async function* watched(messages: AsyncIterable<MessageShape<O>>): AsyncGenerator<MessageShape<O>> {
      try {
        yield* messages;
      } catch (err) {
        observe(err);
        throw err;
      }
    }
    return { ...res, message: watched(res.message) };
  }

  /**
   * Looks at the error of a call made on from: a NOT_LEADER answer naming a leader moves
   * calls there, and observe reports true (the call may be sent again); an unreachable or
   * leaderless member moves them to the next member.
   */
  private observe(from: Member, err: unknown): boolean {
    const leader = leaderOf(err);
    if (leader !== undefined) return this.moveTo(from, memberUrl(leader, this.scheme));
    if (err instanceof ConnectError && err.code === Code.Unavailable && this.members.length > 1) {
      const info = errorInfo(err);
      if (info === undefined || rotateReasons.has(info.reason)) {
        const i = this.members.indexOf(this.currentUrl); // -1 (on a leader not listed): the first
        this.moveTo(from, this.members[(i + 1) % this.members.length]);
      }
    }
    return false;
  }

  /**
   * Makes url the current member, unless another call moved away from `from` already.
   * Reports whether calls now go to url (or wherever that other call moved them).
   */
  private moveTo(from: Member, url: string): boolean {
    if (this.closed) return false;
    if (this.currentUrl === url) return true;
    if (this.member() !== from) return true; // another call moved already: follow it
    let m = this.open.get(url);
    if (m === undefined) {
      try {
        m = this.dial(url);
      } catch {
        return false;
      }
      this.open.set(url, m);
    }
    this.currentUrl = url;
    return true;
  }

  /** Closes every member's transport this one opened; calls in progress fail. */
  close(): void {
    this.closed = true;
    for (const m of this.open.values()) m.close();
  }
}
