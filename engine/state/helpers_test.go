package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// Small builders for test objects.

func node(name string) Change { return Change{Node: &api.Node{Name: name}} }

func queue(name, parent string) Change {
	return Change{Queue: &api.Queue{Name: name, Parent: parent, Weight: 1, State: api.QueueOpen}}
}

func job(ns, name, q string) Change {
	return Change{Job: &api.Job{Namespace: ns, Name: name, Queue: q, MinAvailable: 1}}
}

func task(ns, name, jobName, nodeName string, st api.TaskStatus) Change {
	return Change{Task: &api.Task{Namespace: ns, Name: name, Job: jobName, Node: nodeName, Status: st}}
}

func pendingTask(ns, name, jobName string) Change { return task(ns, name, jobName, "", api.Pending) }

func runningTask(ns, name, jobName, nodeName string) Change {
	return task(ns, name, jobName, nodeName, api.Running)
}

func hyper(name string, tier int32, members ...string) Change {
	return Change{HyperNode: &api.HyperNode{Name: name, Tier: tier, Members: members}}
}

func del(k Kind, ns, name string) Change {
	return Change{Delete: &Ref{Kind: k, Namespace: ns, Name: name}}
}

func batch(changes ...Change) Batch { return Batch{Changes: changes} }

// mustApply applies a batch and fails the test on error.
func mustApply(t testing.TB, s *Store, cluster string, changes ...Change) uint64 {
	t.Helper()
	rev, err := s.Apply(cluster, batch(changes...))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return rev
}

// wantValidation checks that err is a *ValidationError with that index, field and a message
// containing msg.
func wantValidation(t *testing.T, err error, index int, field, msg string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v (%T), want a *ValidationError", err, err)
	}
	if ve.Index != index || ve.Field != field || !strings.Contains(ve.Msg, msg) {
		t.Fatalf("error = {Index: %d, Field: %q, Msg: %q}, want {%d, %q, containing %q}",
			ve.Index, ve.Field, ve.Msg, index, field, msg)
	}
	if index < 0 {
		return
	}
	// Object and Path are Field's parts, so that callers never parse Field.
	rebuilt := fmt.Sprintf("changes[%d]", index)
	if ve.Object != "" {
		rebuilt += "." + ve.Object
	}
	switch {
	case strings.HasPrefix(ve.Path, "["):
		rebuilt += ve.Path
	case ve.Path != "":
		rebuilt += "." + ve.Path
	}
	if rebuilt != ve.Field {
		t.Fatalf("error Object %q and Path %q rebuild %q, not its Field %q", ve.Object, ve.Path, rebuilt, ve.Field)
	}
}

// dump renders a view's whole contents as keys, for comparing states.
func dump(v *View) string {
	var b strings.Builder
	for _, n := range v.Nodes() {
		b.WriteString("node " + n.Name + "\n")
	}
	for _, q := range v.Queues() {
		b.WriteString("queue " + q.Name + " parent=" + q.Parent + "\n")
	}
	for _, j := range v.Jobs() {
		b.WriteString("job " + j.Key() + " queue=" + j.Queue + "\n")
	}
	for _, t := range v.Tasks() {
		b.WriteString("task " + t.Key() + " job=" + t.Job + " node=" + t.Node + " " + t.Status.String() + "\n")
	}
	for _, p := range v.PriorityClasses() {
		b.WriteString("pc " + p.Name + "\n")
	}
	for _, q := range v.Quotas() {
		b.WriteString("quota " + q.Namespace + "\n")
	}
	for _, d := range v.Budgets() {
		b.WriteString("budget " + d.Namespace + "/" + d.Name + "\n")
	}
	for _, h := range v.HyperNodes() {
		b.WriteString("hyper " + h.Name + " " + strings.Join(h.Members, ",") + "\n")
	}
	// The secondary indexes must agree with the primary one.
	for _, j := range v.Jobs() {
		for _, t := range v.TasksOfJob(j.Key()) {
			b.WriteString("  of " + j.Key() + ": " + t.Key() + "\n")
		}
	}
	for _, n := range v.Nodes() {
		for _, t := range v.TasksOnNode(n.Name) {
			b.WriteString("  on " + n.Name + ": " + t.Key() + "\n")
		}
	}
	for _, q := range v.Queues() {
		for _, j := range v.JobsInQueue(q.Name) {
			b.WriteString("  in " + q.Name + ": " + j.Key() + "\n")
		}
	}
	return b.String()
}

func names[T any](items []*T, key func(*T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = key(it)
	}
	return out
}

func nodeNames(ns []*api.Node) []string { return names(ns, func(n *api.Node) string { return n.Name }) }
func queueNames(qs []*api.Queue) []string {
	return names(qs, func(q *api.Queue) string { return q.Name })
}
func jobKeys(js []*api.Job) []string   { return names(js, (*api.Job).Key) }
func taskKeys(ts []*api.Task) []string { return names(ts, (*api.Task).Key) }
