package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// apply sends a cluster file over ClusterStateService.Sync: a plain cluster file (the keys
// of a scenario's cluster, at the top or under cluster:) or a scenario, whose config is set
// as the cluster's scheduler configuration with --with-config. A replacement larger than one
// chunk (sluice.DefaultMaxChunkBytes) goes as a chunked resync, so that a cluster of any size
// fits gRPC's message limits and still replaces the cluster in one atomic write.
func (a *app) apply(args []string) error {
	fs := a.flags("apply")
	file := fs.String("f", "", "cluster or scenario `file` (- for standard input)")
	replace := fs.Bool("replace", false, "replace the whole cluster (replace_all) instead of merging")
	withConfig := fs.Bool("with-config", false, "also set a scenario file's config as the cluster's scheduler configuration (admin token)")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	name, data, err := a.readFileArg("apply", *file, pos)
	if err != nil {
		return err
	}
	// Merging adds to what the server holds, so references may name objects the file does
	// not declare; the server checks them.
	cf, err := scenario.ParseClusterFile(name, data, *replace)
	if err != nil {
		return err
	}
	if *withConfig && cf.Config == "" {
		return fmt.Errorf("apply: --with-config: %s has no config (only a scenario file has one)", name)
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	client := sluicev1.NewClusterStateServiceClient(conn)

	setConfig := func() error {
		_, err := sluicev1.NewSchedulerServiceClient(conn).UpdateSchedulerConfig(a.ctx,
			&sluicev1.UpdateSchedulerConfigRequest{Cluster: a.cluster, Config: cf.Config})
		return err
	}
	// configAfter: the cluster does not exist yet, so its configuration is set once the
	// batch created it.
	configAfter := false
	if *withConfig {
		// First, so that a configuration the server refuses leaves the cluster unchanged. The
		// server checks a configuration before it looks for the cluster, so a new cluster's
		// CLUSTER_NOT_FOUND says the configuration is good.
		if err := setConfig(); err != nil {
			st, _ := status.FromError(err)
			if reasonOf(st) != service.ReasonClusterNotFound {
				return a.rpcError("apply: set the scenario's config", err)
			}
			configAfter = true
		}
	}
	batch := cf.Cluster.Batch()
	batch.Sequence = 1
	var rev uint64
	err = a.retry(func() error {
		var err error
		rev, err = a.sendBatch(client, batch, *replace)
		return err
	})
	if err != nil {
		var rej *rejectedError
		if errors.As(err, &rej) {
			return err
		}
		return a.rpcError("apply", err)
	}
	if configAfter {
		if err := a.retry(setConfig); err != nil {
			return a.rpcError(fmt.Sprintf("apply: the batch created cluster %s, but set the scenario's config", a.cluster), err)
		}
	}
	mode := "merged"
	if *replace {
		mode = "replaced"
	}
	configNote := ""
	switch {
	case *withConfig:
		configNote = "set"
	case cf.Config != "":
		configNote = "ignored"
		fmt.Fprintf(a.stderr, "sluicectl: apply: %s is a scenario; its config was not applied "+
			"(pass --with-config to set it as cluster %s's scheduler configuration)\n", name, a.cluster)
	}
	if *out != "table" {
		v := map[string]any{"cluster": a.cluster, "mode": mode, "objects": len(batch.Deltas), "revision": rev}
		if configNote != "" {
			v["config"] = configNote
		}
		return writeValue(a.stdout, *out, v)
	}
	fmt.Fprintf(a.stdout, "%s %d objects into cluster %s at revision %d\n", mode, len(batch.Deltas), a.cluster, rev)
	if configNote == "set" {
		fmt.Fprintf(a.stdout, "set the scheduler configuration of cluster %s\n", a.cluster)
	}
	return nil
}

// rejectedError is a batch the server refused (a BatchRejected on the stream).
type rejectedError struct {
	rejected *sluicev1.BatchRejected
	// resync is the server's reason when it asked for a full resync first.
	resync string
}

func (e *rejectedError) Error() string {
	var b strings.Builder
	b.WriteString("apply: batch rejected: ")
	b.WriteString(rejectionText(e.rejected))
	if e.resync != "" {
		fmt.Fprintf(&b, "\n  (the server asked for a full resync: %s; rerun with --replace)", e.resync)
	}
	return b.String()
}

// sendBatch sends batch on a Sync stream of its own and returns the revision it was
// acknowledged at, a *rejectedError, or the call's error as gRPC reports it. Without
// replace, the stream resumes from the cluster's current revision (a merge), or replaces
// an empty cluster.
func (a *app) sendBatch(client sluicev1.ClusterStateServiceClient, batch *sluicev1.DeltaBatch, replace bool) (uint64, error) {
	batch.ReplaceAll = replace
	var resume uint64
	if !replace {
		// Resume from the cluster's current revision: this client merges into the state
		// the server has.
		resp, err := client.ListNodes(a.ctx, &sluicev1.ListNodesRequest{Cluster: a.cluster, PageSize: 1})
		switch st, _ := status.FromError(err); {
		case err == nil:
			resume = resp.GetRevision()
		case reasonOf(st) == service.ReasonClusterNotFound:
			// A new cluster: this batch creates it.
		default:
			return 0, err
		}
		if resume == 0 {
			// Nothing to merge with: the same as replacing.
			batch.ReplaceAll = true
		}
	}
	stream, err := client.Sync(a.ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = stream.CloseSend() }()
	send := func(m *sluicev1.SyncRequest) error {
		if err := stream.Send(m); err != nil {
			// gRPC reports the stream's real error on the next receive.
			if errors.Is(err, io.EOF) {
				if rerr := stream.RecvMsg(new(sluicev1.SyncResponse)); rerr != nil && !errors.Is(rerr, io.EOF) {
					return rerr
				}
			}
			return err
		}
		return nil
	}
	if err := send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{
		Hello: &sluicev1.SyncHello{Cluster: a.cluster, ResumeRevision: resume},
	}}); err != nil {
		return 0, err
	}
	for _, m := range batchMessages(batch) {
		if err := send(m); err != nil {
			return 0, err
		}
	}
	resync := ""
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("the server closed the stream without answering the batch")
			}
			return 0, err
		}
		switch m := resp.GetMessage().(type) {
		case *sluicev1.SyncResponse_ResyncRequired:
			resync = m.ResyncRequired.GetReason()
		case *sluicev1.SyncResponse_Ack:
			if m.Ack.GetSequence() == batch.Sequence {
				return m.Ack.GetRevision(), nil
			}
		case *sluicev1.SyncResponse_Rejected:
			if m.Rejected.GetSequence() == batch.Sequence {
				return 0, &rejectedError{rejected: m.Rejected, resync: resync}
			}
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

// rejectionText says why the server refused a batch: the code, the message and a line per
// violation.
func rejectionText(r *sluicev1.BatchRejected) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", codes.Code(r.GetCode()), r.GetMessage())
	for _, v := range r.GetViolations() {
		fmt.Fprintf(&b, "\n  %s: %s", v.GetField(), v.GetDescription())
	}
	return b.String()
}

// streamError turns a failed Send into the stream's status (sendStatus) as apply reports it.
func (a *app) streamError(recv func(any) error, sendErr error) error {
	return a.rpcError("apply", sendStatus(recv, sendErr))
}

// sendStatus turns a failed Send into the stream's status: gRPC reports the real error on
// the next receive.
func sendStatus(recv func(any) error, sendErr error) error {
	if errors.Is(sendErr, io.EOF) {
		if err := recv(new(sluicev1.SyncResponse)); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return sendErr
}
