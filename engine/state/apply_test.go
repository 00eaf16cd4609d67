package state

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// base is a small consistent cluster the error cases start from.
func base() []Change {
	return []Change{
		node("n1"), node("n2"),
		queue("q1", ""), queue("q2", "q1"),
		job("ns", "j1", "q2"),
		runningTask("ns", "t1", "j1", "n1"), pendingTask("ns", "t2", "j1"),
		hyper("s1", 1, "n1", "n2"), hyper("s2", 2, "s1"),
	}
}

func TestApplyRejects(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		index   int
		field   string
		msg     string
	}{
		// Shape and names.
		{"no field set", []Change{{}}, 0, "changes[0]", "exactly one"},
		{"two fields set", []Change{{Node: &api.Node{Name: "x"}, Queue: &api.Queue{Name: "x"}}}, 0, "changes[0]", "got 2"},
		{"empty node name", []Change{node("")}, 0, "changes[0].node.name", "must not be empty"},
		{"NUL in node name", []Change{node("a\x00b")}, 0, "changes[0].node.name", "NUL"},
		{"empty queue name", []Change{queue("", "")}, 0, "changes[0].queue.name", "must not be empty"},
		{"empty job name", []Change{job("ns", "", "q1")}, 0, "changes[0].job.name", "must not be empty"},
		{"slash in job namespace", []Change{job("a/b", "j", "q1")}, 0, "changes[0].job.namespace", "'/'"},
		{"empty job queue", []Change{job("ns", "j", "")}, 0, "changes[0].job.queue", "must not be empty"},
		{"empty task name", []Change{pendingTask("ns", "", "j1")}, 0, "changes[0].task.name", "must not be empty"},
		{"empty task job", []Change{pendingTask("ns", "t", "")}, 0, "changes[0].task.job", "must not be empty"},
		{"empty priority class name", []Change{{PriorityClass: &api.PriorityClass{}}}, 0, "changes[0].priority_class.name", "must not be empty"},
		{"empty quota namespace", []Change{{Quota: &api.NamespaceQuota{}}}, 0, "changes[0].quota.namespace", "must not be empty"},
		{"empty budget name", []Change{{Budget: &api.DisruptionBudget{Namespace: "ns"}}}, 0, "changes[0].budget.name", "must not be empty"},
		{"empty hypernode name", []Change{hyper("", 1)}, 0, "changes[0].hyper_node.name", "must not be empty"},
		{"hypernode tier 0", []Change{hyper("h", 0)}, 0, "changes[0].hyper_node.tier", "at least 1"},
		{"duplicate member", []Change{hyper("h", 1, "n1", "n1")}, 0, "changes[0].hyper_node.members[1]", "duplicate"},
		{"empty member", []Change{hyper("h", 1, "")}, 0, "changes[0].hyper_node.members[0]", "must not be empty"},
		{"empty delete name", []Change{del(KindNode, "", "")}, 0, "changes[0].delete.name", "must not be empty"},
		{"empty delete task name", []Change{del(KindTask, "ns", "")}, 0, "changes[0].delete.name", "must not be empty"},
		{"bad delete kind", []Change{del(0, "", "x")}, 0, "changes[0].delete.kind", "unknown kind"},

		// Tasks.
		{"task of a missing job", []Change{node("n3"), pendingTask("ns", "t9", "nope")}, 1, "changes[1].task.job", `job "ns/nope"`},
		{"task job in another namespace", []Change{pendingTask("other", "t9", "j1")}, 0, "changes[0].task.job", `job "other/j1"`},
		{"task on a missing node", []Change{runningTask("ns", "t9", "j1", "n9")}, 0, "changes[0].task.node", `node "n9"`},
		{"allocated task on a missing node", []Change{task("ns", "t9", "j1", "n9", api.Allocated)}, 0, "changes[0].task.node", `node "n9"`},
		{"pipelined task on a missing node", []Change{task("ns", "t9", "j1", "n9", api.Pipelined)}, 0, "changes[0].task.node", `node "n9"`},
		{"running task without node", []Change{runningTask("ns", "t9", "j1", "")}, 0, "changes[0].task.node", "Running task must name its node"},
		{"releasing task without node", []Change{task("ns", "t9", "j1", "", api.Releasing)}, 0, "changes[0].task.node", "Releasing"},
		{"binding task without node", []Change{task("ns", "t9", "j1", "", api.Binding)}, 0, "changes[0].task.node", "Binding"},
		{"bound task without node", []Change{task("ns", "t9", "j1", "", api.Bound)}, 0, "changes[0].task.node", "Bound"},
		{"task left by a later job delete", []Change{pendingTask("ns", "t9", "j9"), job("ns", "j9", "q1"), del(KindJob, "ns", "j9"), pendingTask("ns", "t8", "j9")}, 3, "changes[3].task.job", `job "ns/j9"`},

		// Jobs and queues.
		{"job in a missing queue", []Change{job("ns", "j9", "q9")}, 0, "changes[0].job.queue", `queue "q9"`},
		{"queue with a missing parent", []Change{queue("q9", "q8")}, 0, "changes[0].queue.parent", `parent queue "q8"`},
		{"queue parent cycle", []Change{queue("qa", "qb"), queue("qb", "qa")}, 0, "changes[0].queue.parent", "cycle"},
		{"queue cycle through existing queues", []Change{queue("q1", "q2")}, 0, "changes[0].queue.parent", "q1 -> q2 -> q1"},
		{"queue is its own parent", []Change{queue("qa", "qa")}, 0, "changes[0].queue.parent", "cycle"},
		{"root queue with a parent", []Change{queue("root", "q1")}, 0, "changes[0].queue.parent", "root queue"},
		{"delete a queue with jobs", []Change{del(KindQueue, "", "q2")}, 0, "changes[0].delete", `queue "q2" still has job "ns/j1"`},
		{"delete a queue with children", []Change{del(KindJob, "ns", "j1"), del(KindQueue, "", "q1")}, 1, "changes[1].delete", `child queue "q2"`},

		// Nodes and hypernodes.
		{"delete a node with tasks", []Change{del(KindNode, "", "n1")}, 0, "changes[0].delete", `node "n1" still has task "ns/t1"`},
		{"delete a node in a hypernode", []Change{del(KindNode, "", "n2")}, 0, "changes[0].delete", `member of hypernode "s1"`},
		{"delete a hypernode in a hypernode", []Change{del(KindHyperNode, "", "s1")}, 0, "changes[0].delete", `member of hypernode "s2"`},
		{"tier-1 member is not a node", []Change{hyper("s3", 1, "n1", "s1")}, 0, "changes[0].hyper_node.members[1]", `node "s1" does not exist`},
		{"tier-2 member is not a hypernode", []Change{hyper("s3", 2, "n1")}, 0, "changes[0].hyper_node.members[0]", `hypernode "n1" does not exist`},
		{"member tier not lower", []Change{hyper("s3", 2, "s2")}, 0, "changes[0].hyper_node.members[0]", "not lower than 2"},
		{"hypernode is its own member", []Change{hyper("s3", 2, "s3")}, 0, "changes[0].hyper_node.members[0]", "not lower"},
		{"member raised to its parent's tier", []Change{hyper("s1", 2)}, 0, "changes[0].hyper_node.tier", `hypernode "s2" (tier 2) has "s1" as a member`},

		// Deletes of missing objects.

		// The lowest index wins, whatever the order the checks run in.
		{"lowest index reported", []Change{node("n3"), pendingTask("ns", "t9", "nope"), job("ns", "j9", "q9")}, 1, "changes[1].task.job", "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			rev := mustApply(t, s, "c", base()...)
			before := dump(&s.Snapshot("c").View)
			got, err := s.Apply("c", batch(tt.changes...))
			wantValidation(t, err, tt.index, tt.field, tt.msg)
			if got != rev || s.Revision("c") != rev {
				t.Errorf("revision = %d / %d after a rejected batch, want %d", got, s.Revision("c"), rev)
			}
			if after := dump(&s.Snapshot("c").View); after != before {
				t.Errorf("a rejected batch changed the state:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

func TestApplyRejectsBadCluster(t *testing.T) {
	s := New()
	for _, c := range []string{"", "a\x00b"} {
		_, err := s.Apply(c, batch(node("n1")))
		var field string
		if c == "" {
			field = "must not be empty"
		} else {
			field = "NUL"
		}
		wantValidation(t, err, -1, "cluster", field)
	}
	if got := s.Clusters(); len(got) != 0 {
		t.Errorf("Clusters() = %v, want none", got)
	}
}

func TestApplyAccepts(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
	}{
		{"objects in any order", []Change{runningTask("ns", "t9", "j9", "n9"), job("ns", "j9", "q9"), queue("q9", "q8"), queue("q8", "root"), node("n9")}},
		{"delete a node after its tasks", []Change{del(KindTask, "ns", "t1"), hyper("s1", 1, "n1"), del(KindNode, "", "n2")}},
		{"delete a node and re-create it", []Change{del(KindNode, "", "n1"), node("n1")}},
		{"move tasks off a node, then delete it", []Change{del(KindNode, "", "n1"), runningTask("ns", "t1", "j1", "n2"), hyper("s1", 1, "n2")}},
		{"delete a queue and move its jobs", []Change{del(KindQueue, "", "q2"), job("ns", "j1", "q1")}},
		{"re-parent queues", []Change{queue("q1", "q2"), queue("q2", "")}},
		{"delete an explicit root queue with children", []Change{queue("root", ""), queue("q3", "root"), del(KindQueue, "", "root")}},
		{"delete a job with tasks on a node, then the node", []Change{del(KindJob, "ns", "j1"), hyper("s1", 1, "n2"), del(KindNode, "", "n1")}},
		{"upsert then delete in one batch", []Change{node("n9"), del(KindNode, "", "n9")}},
		{"allocated and pipelined tasks may lack a node", []Change{task("ns", "t8", "j1", "", api.Allocated), task("ns", "t9", "j1", "", api.Pipelined)}},
		{"finished tasks", []Change{task("ns", "t8", "j1", "", api.Succeeded), task("ns", "t9", "j1", "n2", api.Failed)}},
		{"hypernode tiers with a gap", []Change{hyper("s9", 5, "s2", "s1")}},
		{"delete a hypernode and its parent", []Change{del(KindHyperNode, "", "s1"), del(KindHyperNode, "", "s2")}},
		{"quota", []Change{{Quota: &api.NamespaceQuota{Namespace: "ns"}}}},
		{"other kinds", []Change{
			{PriorityClass: &api.PriorityClass{Name: "high", Value: 100}},
			{Budget: &api.DisruptionBudget{Namespace: "ns", Name: "b"}},
			{Quota: &api.NamespaceQuota{Namespace: "ns2"}},
		}},
		{"empty batch", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			rev := mustApply(t, s, "c", base()...)
			got, err := s.Apply("c", batch(tt.changes...))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != rev+1 || s.Revision("c") != rev+1 {
				t.Errorf("revision = %d / %d, want %d", got, s.Revision("c"), rev+1)
			}
		})
	}
}

func TestApplyKinds(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	mustApply(t, s, "c",
		Change{PriorityClass: &api.PriorityClass{Name: "high", Value: 100}},
		Change{Budget: &api.DisruptionBudget{Namespace: "ns", Name: "b", MinAvailable: "1"}},
		Change{Quota: &api.NamespaceQuota{Namespace: "ns"}},
	)
	v := s.Snapshot("c")
	if pc, ok := v.PriorityClass("high"); !ok || pc.Value != 100 {
		t.Errorf("PriorityClass(high) = %v, %v", pc, ok)
	}
	if b, ok := v.Budget("ns/b"); !ok || b.MinAvailable != "1" {
		t.Errorf("Budget(ns/b) = %v, %v", b, ok)
	}
	if _, ok := v.Quota("ns"); !ok {
		t.Error("Quota(ns) missing")
	}
	if h, ok := v.HyperNode("s2"); !ok || h.Tier != 2 {
		t.Errorf("HyperNode(s2) = %v, %v", h, ok)
	}
	// Deletes by Ref of every kind; a quota may be named by Name.
	mustApply(t, s, "c",
		del(KindPriorityClass, "", "high"), del(KindBudget, "ns", "b"), del(KindQuota, "", "ns"),
		del(KindHyperNode, "", "s2"), del(KindHyperNode, "", "s1"), del(KindTask, "ns", "t1"),
		del(KindJob, "ns", "j1"), del(KindQueue, "", "q2"), del(KindQueue, "", "q1"),
		del(KindNode, "", "n1"), del(KindNode, "", "n2"),
	)
	if got := dump(&s.Snapshot("c").View); got != "" {
		t.Errorf("state after deleting everything:\n%s", got)
	}
}

func TestUpsertReplaces(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	// Move t1 from n1 to n2 and j1 from q2 to q1: the secondary indexes follow.
	mustApply(t, s, "c", runningTask("ns", "t1", "j1", "n2"), job("ns", "j1", "q1"))
	v := s.Snapshot("c")
	if got := taskKeys(v.TasksOnNode("n1")); len(got) != 0 {
		t.Errorf("TasksOnNode(n1) = %v, want none", got)
	}
	if got := taskKeys(v.TasksOnNode("n2")); !slices.Equal(got, []string{"ns/t1"}) {
		t.Errorf("TasksOnNode(n2) = %v", got)
	}
	if got := jobKeys(v.JobsInQueue("q2")); len(got) != 0 {
		t.Errorf("JobsInQueue(q2) = %v, want none", got)
	}
	if got := jobKeys(v.JobsInQueue("q1")); !slices.Equal(got, []string{"ns/j1"}) {
		t.Errorf("JobsInQueue(q1) = %v", got)
	}
	// Unplacing a task takes it out of the node index.
	mustApply(t, s, "c", pendingTask("ns", "t1", "j1"))
	if got := s.Snapshot("c").TasksOnNode("n2"); len(got) != 0 {
		t.Errorf("TasksOnNode(n2) = %v after unplacing", taskKeys(got))
	}
}

func TestCascadeDelete(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	mustApply(t, s, "c", job("ns", "j2", "q2"), pendingTask("ns", "t3", "j2"), job("other", "j1", "q1"), pendingTask("other", "t1", "j1"))
	mustApply(t, s, "c", del(KindJob, "ns", "j1"))
	v := s.Snapshot("c")
	if got := taskKeys(v.Tasks()); !slices.Equal(got, []string{"ns/t3", "other/t1"}) {
		t.Errorf("tasks after deleting ns/j1 = %v", got)
	}
	if got := v.TasksOnNode("n1"); len(got) != 0 {
		t.Errorf("TasksOnNode(n1) = %v", taskKeys(got))
	}
	// With its tasks gone, n1 can go.
	mustApply(t, s, "c", hyper("s1", 1, "n2"), del(KindNode, "", "n1"))
}

func TestImplicitDefaultQueue(t *testing.T) {
	s := New()
	mustApply(t, s, "c", job("ns", "j1", "default"))
	q, ok := s.Snapshot("c").Queue("default")
	if !ok {
		t.Fatal("default queue not created")
	}
	if q.Weight != 1 || q.State != api.QueueOpen || !q.Reclaimable || q.Parent != "" {
		t.Errorf("default queue = %+v, want weight 1, Open, reclaimable, top-level", q)
	}
	// An explicit default queue is kept as given.
	s2 := New()
	mustApply(t, s2, "c", job("ns", "j1", "default"), Change{Queue: &api.Queue{Name: "default", Weight: 5}})
	if q, _ := s2.Snapshot("c").Queue("default"); q.Weight != 5 {
		t.Errorf("explicit default queue weight = %d, want 5", q.Weight)
	}
	// A queue under default works when a job creates default, in any order.
	s3 := New()
	mustApply(t, s3, "c", queue("child", "default"), job("ns", "j1", "default"))
	// A rejected batch does not create it.
	s4 := New()
	if _, err := s4.Apply("c", batch(job("ns", "j1", "default"), pendingTask("ns", "t1", "nope"))); err == nil {
		t.Fatal("want an error")
	}
	if _, ok := s4.Snapshot("c").Queue("default"); ok {
		t.Error("rejected batch created the default queue")
	}
	// Deleting it while jobs use it is refused like any queue.
	_, err := s.Apply("c", batch(del(KindQueue, "", "default")))
	wantValidation(t, err, 0, "changes[0].delete", `queue "default" still has job`)
	// Only jobs create it.
	_, err = s4.Apply("c", batch(queue("child", "default")))
	wantValidation(t, err, 0, "changes[0].queue.parent", `parent queue "default"`)
}

func TestReplaceAll(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	mustApply(t, s, "other", base()...)
	rev, err := s.Apply("c", Batch{ReplaceAll: true, Changes: []Change{
		node("n1"), node("n7"), queue("q1", ""), job("ns", "j7", "q1"), runningTask("ns", "t7", "j7", "n7"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if rev != 2 {
		t.Errorf("revision = %d, want 2", rev)
	}
	want := "node n1\nnode n7\nqueue q1 parent=\njob ns/j7 queue=q1\ntask ns/t7 job=j7 node=n7 Running\n" +
		"  of ns/j7: ns/t7\n  on n7: ns/t7\n  in q1: ns/j7\n"
	if got := dump(&s.Snapshot("c").View); got != want {
		t.Errorf("state after replace_all:\n%s\nwant:\n%s", got, want)
	}
	// The other cluster is untouched.
	if got := len(s.Snapshot("other").Tasks()); got != 2 {
		t.Errorf("other cluster has %d tasks, want 2", got)
	}
	// A replace_all batch is checked like any other and rejected as a whole: a task of a job
	// that only existed before does not survive it.
	before := dump(&s.Snapshot("c").View)
	_, err = s.Apply("c", Batch{ReplaceAll: true, Changes: []Change{pendingTask("ns", "t8", "j7")}})
	wantValidation(t, err, 0, "changes[0].task.job", `job "ns/j7"`)
	if after := dump(&s.Snapshot("c").View); after != before || s.Revision("c") != 2 {
		t.Errorf("rejected replace_all changed the state:\n%s", after)
	}
	// An empty replace_all empties the cluster; the cluster and its revision stay.
	rev, err = s.Apply("c", Batch{ReplaceAll: true})
	if err != nil || rev != 3 {
		t.Fatalf("empty replace_all = %d, %v", rev, err)
	}
	if got := dump(&s.Snapshot("c").View); got != "" {
		t.Errorf("state after empty replace_all:\n%s", got)
	}
	if got := s.Clusters(); !slices.Equal(got, []string{"c", "other"}) {
		t.Errorf("Clusters() = %v", got)
	}
}

func TestDeleteIsIdempotent(t *testing.T) {
	s := New()
	mustApply(t, s, "c", node("n1"))
	for _, c := range []Change{del(KindNode, "", "n9"), del(KindTask, "ns", "t9"), del(KindQuota, "ns", "")} {
		rev := s.Revision("c")
		got, err := s.Apply("c", batch(c))
		if err != nil || got != rev+1 {
			t.Errorf("delete of a missing %s: revision %d, err %v; want %d and no error", c.Delete, got, err, rev+1)
		}
	}
	if _, ok := s.Snapshot("c").Node("n1"); !ok {
		t.Error("an idempotent delete removed something else")
	}
}

func TestRevisions(t *testing.T) {
	s := New()
	if got := s.Revision("c"); got != 0 {
		t.Fatalf("fresh cluster revision = %d, want 0", got)
	}
	for want := uint64(1); want <= 3; want++ {
		if got := mustApply(t, s, "c", node("n1")); got != want {
			t.Fatalf("revision = %d, want %d", got, want)
		}
	}
	// An empty batch is a write too.
	if got := mustApply(t, s, "c"); got != 4 {
		t.Errorf("empty batch revision = %d, want 4", got)
	}
	// A rejected batch does not advance it.
	if got, err := s.Apply("c", batch(job("ns", "orphan", "no-such-queue"))); err == nil || got != 4 {
		t.Errorf("rejected batch = %d, %v; want 4 and an error", got, err)
	}
	// Clusters count separately.
	if got := mustApply(t, s, "d", node("n1")); got != 1 {
		t.Errorf("cluster d revision = %d, want 1", got)
	}
	if got := s.Revision("c"); got != 4 {
		t.Errorf("cluster c revision = %d, want 4", got)
	}
	if got := s.Snapshot("c").Revision(); got != 4 {
		t.Errorf("snapshot revision = %d, want 4", got)
	}
}

func TestSnapshotIsolation(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	snap := s.Snapshot("c")
	before := dump(&snap.View)
	mustApply(t, s, "c", node("n3"), del(KindJob, "ns", "j1"), runningTask("ns", "t1", "j2", "n3"), job("ns", "j2", "q1"))
	if _, err := s.Apply("c", Batch{ReplaceAll: true}); err != nil {
		t.Fatal(err)
	}
	if got := dump(&snap.View); got != before {
		t.Errorf("snapshot changed after later writes:\n%s\nwant:\n%s", got, before)
	}
	if snap.Revision() != 1 {
		t.Errorf("snapshot revision = %d, want 1", snap.Revision())
	}
	if _, ok := snap.Node("n3"); ok {
		t.Error("snapshot sees a later node")
	}
	if got := s.Snapshot("c").Nodes(); len(got) != 0 {
		t.Errorf("new snapshot sees %v", nodeNames(got))
	}
}

func TestClusterIsolation(t *testing.T) {
	s := New()
	// "c" is a prefix of "c2": keys must not run into each other.
	mustApply(t, s, "c", node("n1"), queue("q1", ""), job("ns", "j1", "q1"), runningTask("ns", "t1", "j1", "n1"))
	mustApply(t, s, "c2", node("n2"), queue("q1", ""), job("ns", "j1", "q1"))
	if got := nodeNames(s.Snapshot("c").Nodes()); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("c nodes = %v", got)
	}
	if got := nodeNames(s.Snapshot("c2").Nodes()); !slices.Equal(got, []string{"n2"}) {
		t.Errorf("c2 nodes = %v", got)
	}
	// References resolve within the cluster only.
	_, err := s.Apply("c2", batch(runningTask("ns", "t1", "j1", "n1")))
	wantValidation(t, err, 0, "changes[0].task.node", `node "n1"`)
	_, err = s.Apply("c3", batch(pendingTask("ns", "t1", "j1")))
	wantValidation(t, err, 0, "changes[0].task.job", `job "ns/j1"`)
	// Deletes and cascades stay in the cluster.
	mustApply(t, s, "c2", del(KindJob, "ns", "j1"))
	if got := taskKeys(s.Snapshot("c").TasksOfJob("ns/j1")); !slices.Equal(got, []string{"ns/t1"}) {
		t.Errorf("c tasks of ns/j1 = %v", got)
	}
	if got := len(s.Snapshot("c2").Tasks()); got != 0 {
		t.Errorf("c2 has %d tasks", got)
	}
	if got := s.Snapshot("nope").Nodes(); len(got) != 0 {
		t.Errorf("unknown cluster has nodes %v", nodeNames(got))
	}
	if got := s.Clusters(); !slices.Equal(got, []string{"c", "c2"}) {
		t.Errorf("Clusters() = %v (a rejected first batch must not create a cluster)", got)
	}
}

func TestValidationErrorMessage(t *testing.T) {
	s := New()
	_, err := s.Apply("c", batch(node("n1"), pendingTask("ns", "t1", "j1")))
	if got, want := err.Error(), `state: changes[1].task.job: job "ns/j1" of task "ns/t1" does not exist`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !strings.Contains((&ValidationError{Field: "cluster", Msg: "x"}).Error(), "cluster: x") {
		t.Error("batch-level message")
	}
}

func TestKindString(t *testing.T) {
	want := map[Kind]string{
		KindNode: "node", KindQueue: "queue", KindJob: "job", KindTask: "task",
		KindPriorityClass: "priority_class", KindQuota: "quota", KindBudget: "budget",
		KindHyperNode: "hyper_node", 0: "Kind(0)", 42: "Kind(42)",
	}
	for k, w := range want {
		if got := k.String(); got != w {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, w)
		}
	}
	if got := (Ref{Kind: KindTask, Namespace: "ns", Name: "t"}).String(); got != `task "ns/t"` {
		t.Errorf("Ref.String() = %q", got)
	}
}
