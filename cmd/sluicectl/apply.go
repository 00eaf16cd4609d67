package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// apply sends a cluster file over ClusterStateService.Sync. A replacement larger than one
// chunk (sluice.DefaultMaxChunkBytes) goes as a chunked resync, so that a cluster of any size
// fits gRPC's message limits and still replaces the cluster in one atomic write.
func (a *app) apply(args []string) error {
	fs := a.flags("apply")
	file := fs.String("f", "", "cluster or scenario `file` (- for standard input)")
	replace := fs.Bool("replace", false, "replace the whole cluster (replace_all) instead of merging")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("apply: unexpected argument %q", pos[0])
	}
	if *file == "" {
		return usagef("apply: -f FILE is required")
	}
	data, err := a.readInput(*file)
	if err != nil {
		return err
	}
	name := *file
	if name == "-" {
		name = "<stdin>"
	}
	// Merging adds to what the server holds, so references may name objects
	// the file does not declare; the server checks them.
	parseFn := scenario.ParseClusterPartial
	if *replace {
		parseFn = scenario.ParseCluster
	}
	c, err := parseFn(name, data)
	if err != nil {
		return err
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	client := sluicev1.NewClusterStateServiceClient(conn)

	batch := c.Batch()
	batch.Sequence = 1
	batch.ReplaceAll = *replace
	var resume uint64
	if !*replace {
		// Resume from the cluster's current revision: this client merges
		// into the state the server has.
		resp, err := client.ListNodes(a.ctx, &sluicev1.ListNodesRequest{Cluster: a.cluster, PageSize: 1})
		if err != nil {
			return a.rpcError("apply", err)
		}
		resume = resp.GetRevision()
		if resume == 0 {
			// Nothing to merge with: the same as replacing.
			batch.ReplaceAll = true
		}
	}

	stream, err := client.Sync(a.ctx)
	if err != nil {
		return a.rpcError("apply", err)
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{
		Hello: &sluicev1.SyncHello{Cluster: a.cluster, ResumeRevision: resume},
	}}); err != nil {
		return a.streamError(stream.RecvMsg, err)
	}
	for _, m := range batchMessages(batch) {
		if err := stream.Send(m); err != nil {
			return a.streamError(stream.RecvMsg, err)
		}
	}
	resync := ""
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("apply: the server closed the stream without answering the batch")
			}
			return a.rpcError("apply", err)
		}
		switch m := resp.GetMessage().(type) {
		case *sluicev1.SyncResponse_Welcome:
		case *sluicev1.SyncResponse_ResyncRequired:
			resync = m.ResyncRequired.GetReason()
		case *sluicev1.SyncResponse_Ack:
			if m.Ack.GetSequence() != batch.Sequence {
				continue
			}
			_ = stream.CloseSend()
			mode := "merged"
			if *replace {
				mode = "replaced"
			}
			if *out != "table" {
				return writeValue(a.stdout, *out, map[string]any{
					"cluster": a.cluster, "mode": mode, "objects": len(batch.Deltas), "revision": m.Ack.GetRevision(),
				})
			}
			fmt.Fprintf(a.stdout, "%s %d objects into cluster %s at revision %d\n",
				mode, len(batch.Deltas), a.cluster, m.Ack.GetRevision())
			return nil
		case *sluicev1.SyncResponse_Rejected:
			if m.Rejected.GetSequence() != batch.Sequence {
				continue
			}
			_ = stream.CloseSend()
			r := m.Rejected
			var b strings.Builder
			fmt.Fprintf(&b, "apply: batch rejected: %s: %s", codes.Code(r.GetCode()), r.GetMessage())
			for _, v := range r.GetViolations() {
				fmt.Fprintf(&b, "\n  %s: %s", v.GetField(), v.GetDescription())
			}
			if resync != "" {
				fmt.Fprintf(&b, "\n  (the server asked for a full resync: %s; rerun with --replace)", resync)
			}
			return errors.New(b.String())
		}
	}
}

// batchMessages returns the messages that carry a batch: the batch itself, or, for a
// replace_all batch larger than one chunk, the chunks of a chunked resync.
func batchMessages(b *sluicev1.DeltaBatch) []*sluicev1.SyncRequest {
	if b.GetReplaceAll() {
		if chunks := sluice.ResyncChunks(b.GetSequence(), b.GetDeltas(), 0); len(chunks) > 1 {
			out := make([]*sluicev1.SyncRequest, len(chunks))
			for i, c := range chunks {
				out[i] = &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_ResyncChunk{ResyncChunk: c}}
			}
			return out
		}
	}
	return []*sluicev1.SyncRequest{{Message: &sluicev1.SyncRequest_Batch{Batch: b}}}
}

// streamError turns a failed Send into the stream's status: gRPC reports
// the real error on the next receive.
func (a *app) streamError(recv func(any) error, sendErr error) error {
	if errors.Is(sendErr, io.EOF) {
		if err := recv(new(sluicev1.SyncResponse)); err != nil && !errors.Is(err, io.EOF) {
			return a.rpcError("apply", err)
		}
	}
	return a.rpcError("apply", sendErr)
}
