package main

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// deleteKinds maps the names delete accepts to object kinds.
var deleteKinds = map[string]sluicev1.ObjectKind{
	"node": sluicev1.ObjectKind_OBJECT_KIND_NODE, "nodes": sluicev1.ObjectKind_OBJECT_KIND_NODE,
	"queue": sluicev1.ObjectKind_OBJECT_KIND_QUEUE, "queues": sluicev1.ObjectKind_OBJECT_KIND_QUEUE,
	"job": sluicev1.ObjectKind_OBJECT_KIND_JOB, "jobs": sluicev1.ObjectKind_OBJECT_KIND_JOB,
	"task": sluicev1.ObjectKind_OBJECT_KIND_TASK, "tasks": sluicev1.ObjectKind_OBJECT_KIND_TASK,
	"priorityclass": sluicev1.ObjectKind_OBJECT_KIND_PRIORITY_CLASS, "pc": sluicev1.ObjectKind_OBJECT_KIND_PRIORITY_CLASS,
	"quota": sluicev1.ObjectKind_OBJECT_KIND_NAMESPACE_QUOTA, "namespacequota": sluicev1.ObjectKind_OBJECT_KIND_NAMESPACE_QUOTA,
	"pdb": sluicev1.ObjectKind_OBJECT_KIND_DISRUPTION_BUDGET, "disruptionbudget": sluicev1.ObjectKind_OBJECT_KIND_DISRUPTION_BUDGET,
	"hypernode": sluicev1.ObjectKind_OBJECT_KIND_HYPER_NODE, "hypernodes": sluicev1.ObjectKind_OBJECT_KIND_HYPER_NODE,
}

// namespaced kinds take NAME as namespace/name.
var namespaced = map[sluicev1.ObjectKind]bool{
	sluicev1.ObjectKind_OBJECT_KIND_JOB: true, sluicev1.ObjectKind_OBJECT_KIND_TASK: true,
	sluicev1.ObjectKind_OBJECT_KIND_DISRUPTION_BUDGET: true,
}

// delete deletes one object through ApplyDeltas, or a whole cluster through DeleteCluster. For
// kinds the API can read, a missing object is an error unless --ignore-not-found.
func (a *app) delete(args []string) error {
	fs := a.flags("delete")
	ignore := fs.Bool("ignore-not-found", false, "succeed when the object does not exist")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("delete: expected KIND NAME")
	}
	if k := strings.ToLower(pos[0]); k == "cluster" || k == "clusters" {
		conn, err := a.dial()
		if err != nil {
			return err
		}
		defer conn.Close()
		return a.deleteCluster(sluicev1.NewClusterStateServiceClient(conn), pos[1], *ignore, *out)
	}
	kind, ok := deleteKinds[strings.ToLower(pos[0])]
	if !ok {
		return usagef("delete: unknown kind %q (expected node, queue, job, task, priorityclass, quota, pdb, hypernode or cluster)", pos[0])
	}
	ref := &sluicev1.ObjectRef{Kind: kind, Name: pos[1]}
	display := pos[1]
	if namespaced[kind] {
		ref.Namespace, ref.Name = scenario.SplitName(pos[1])
		display = fullName(ref.Namespace, ref.Name)
	}
	noun := strings.ToLower(enumName(kind.String(), "OBJECT_KIND_"))
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := sluicev1.NewClusterStateServiceClient(conn)
	if exists, checked, err := a.exists(c, ref); err != nil {
		return a.rpcError("delete", err)
	} else if checked && !exists {
		if *ignore {
			return a.deleted(*out, noun, display, 0, false)
		}
		return fmt.Errorf("delete: %s %s not found in cluster %s (pass --ignore-not-found to succeed anyway)", noun, display, a.cluster)
	}
	resp, err := c.ApplyDeltas(a.ctx, &sluicev1.ApplyDeltasRequest{Cluster: a.cluster, Batch: &sluicev1.DeltaBatch{
		Deltas: []*sluicev1.Delta{{Change: &sluicev1.Delta_Delete{Delete: ref}}},
	}})
	if err != nil {
		return a.rpcError("delete", err)
	}
	return a.deleted(*out, noun, display, resp.GetRevision(), true)
}

func (a *app) deleted(format, noun, name string, rev uint64, done bool) error {
	if format != "table" {
		return writeValue(a.stdout, format, map[string]any{
			"cluster": a.cluster, "kind": noun, "name": name, "deleted": done, "revision": rev,
		})
	}
	if !done {
		_, err := fmt.Fprintf(a.stdout, "%s %s not found in cluster %s; nothing to delete\n", noun, name, a.cluster)
		return err
	}
	_, err := fmt.Fprintf(a.stdout, "deleted %s %s from cluster %s at revision %d\n", noun, name, a.cluster, rev)
	return err
}

// exists looks the object up, for the kinds the API can read.
func (a *app) exists(c sluicev1.ClusterStateServiceClient, ref *sluicev1.ObjectRef) (exists, checked bool, err error) {
	switch ref.GetKind() {
	case sluicev1.ObjectKind_OBJECT_KIND_NODE:
		_, err = c.GetNode(a.ctx, &sluicev1.GetNodeRequest{Cluster: a.cluster, Name: ref.GetName()})
	case sluicev1.ObjectKind_OBJECT_KIND_QUEUE:
		_, err = c.GetQueue(a.ctx, &sluicev1.GetQueueRequest{Cluster: a.cluster, Name: ref.GetName()})
	case sluicev1.ObjectKind_OBJECT_KIND_JOB:
		_, err = c.GetJob(a.ctx, &sluicev1.GetJobRequest{Cluster: a.cluster, Namespace: ref.GetNamespace(), Name: ref.GetName()})
	case sluicev1.ObjectKind_OBJECT_KIND_TASK:
		_, err = c.GetTask(a.ctx, &sluicev1.GetTaskRequest{Cluster: a.cluster, Namespace: ref.GetNamespace(), Name: ref.GetName()})
	default:
		return false, false, nil
	}
	if status.Code(err) == codes.NotFound {
		return false, true, nil
	}
	return err == nil, err == nil, err
}
