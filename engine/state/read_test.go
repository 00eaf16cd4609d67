package state

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// pagingStore has 25 nodes, 3 queues, 12 jobs spread over two queues, and 3 tasks per job,
// the first two of each job on nodes.
func pagingStore(t *testing.T) *Store {
	s := New()
	var cs []Change
	for i := 24; i >= 0; i-- { // inserted in reverse: lists must still come sorted
		cs = append(cs, node(fmt.Sprintf("n%02d", i)))
	}
	cs = append(cs, queue("qa", ""), queue("qb", ""), queue("qc", "qa"))
	for j := 0; j < 12; j++ {
		q := "qa"
		if j%3 == 0 {
			q = "qb"
		}
		jn := fmt.Sprintf("j%02d", j)
		cs = append(cs, job("ns", jn, q))
		for k := 0; k < 3; k++ {
			tn := fmt.Sprintf("%s-t%d", jn, k)
			if k < 2 {
				cs = append(cs, runningTask("ns", tn, jn, fmt.Sprintf("n%02d", (j+k)%5)))
			} else {
				cs = append(cs, pendingTask("ns", tn, jn))
			}
		}
	}
	mustApply(t, s, "c", cs...)
	mustApply(t, s, "c2", node("n00"), node("zz")) // a neighbouring cluster must not leak in
	return s
}

// pages collects every page of a listing and checks each page's size.
func pages[T any](t *testing.T, limit int, list func(after string, limit int) ([]*T, string), key func(*T) string) []string {
	t.Helper()
	var out []string
	after := ""
	for n := 0; ; n++ {
		items, next := list(after, limit)
		if len(items) > limit {
			t.Fatalf("page %d has %d items, limit %d", n, len(items), limit)
		}
		for _, it := range items {
			out = append(out, key(it))
		}
		if next == "" {
			return out
		}
		if len(items) != limit {
			t.Fatalf("page %d has %d items but a next cursor", n, len(items))
		}
		if next != key(items[len(items)-1]) {
			t.Fatalf("next = %q, want the last key %q", next, key(items[len(items)-1]))
		}
		after = next
		if n > 1000 {
			t.Fatal("paging does not end")
		}
	}
}

func TestListsAreSorted(t *testing.T) {
	s := pagingStore(t)
	v := s.Snapshot("c")
	if got := nodeNames(v.Nodes()); len(got) != 25 || !slices.IsSorted(got) {
		t.Errorf("Nodes() = %v", got)
	}
	if got := jobKeys(v.Jobs()); len(got) != 12 || !slices.IsSorted(got) {
		t.Errorf("Jobs() = %v", got)
	}
	if got := taskKeys(v.Tasks()); len(got) != 36 || !slices.IsSorted(got) {
		t.Errorf("Tasks() = %v", got)
	}
	if got := queueNames(v.Queues()); !slices.Equal(got, []string{"qa", "qb", "qc"}) {
		t.Errorf("Queues() = %v", got)
	}
	if got := taskKeys(v.TasksOfJob("ns/j03")); !slices.Equal(got, []string{"ns/j03-t0", "ns/j03-t1", "ns/j03-t2"}) {
		t.Errorf("TasksOfJob = %v", got)
	}
	if got := taskKeys(v.TasksOnNode("n00")); !slices.Equal(got, []string{"ns/j00-t0", "ns/j04-t1", "ns/j05-t0", "ns/j09-t1", "ns/j10-t0"}) {
		t.Errorf("TasksOnNode(n00) = %v", got)
	}
	if got := v.TasksOnNode(""); got != nil {
		t.Errorf("TasksOnNode(\"\") = %v, want nil", taskKeys(got))
	}
	if got := jobKeys(v.JobsInQueue("qb")); !slices.Equal(got, []string{"ns/j00", "ns/j03", "ns/j06", "ns/j09"}) {
		t.Errorf("JobsInQueue(qb) = %v", got)
	}
	if got := v.JobsInQueue("q"); len(got) != 0 { // a prefix of a queue name matches nothing
		t.Errorf("JobsInQueue(q) = %v", jobKeys(got))
	}
	if n, ok := v.Node("n07"); !ok || n.Name != "n07" {
		t.Errorf("Node(n07) = %v, %v", n, ok)
	}
	if _, ok := v.Node("n0"); ok {
		t.Error("Node(n0) found")
	}
	if j, ok := v.Job("ns/j01"); !ok || j.Queue != "qa" {
		t.Errorf("Job(ns/j01) = %v, %v", j, ok)
	}
	if tk, ok := v.Task("ns/j01-t1"); !ok || tk.Node != "n02" {
		t.Errorf("Task(ns/j01-t1) = %v, %v", tk, ok)
	}
	if q, ok := v.Queue("qc"); !ok || q.Parent != "qa" {
		t.Errorf("Queue(qc) = %v, %v", q, ok)
	}
	if v.Cluster() != "c" {
		t.Errorf("Cluster() = %q", v.Cluster())
	}
}

func TestPagination(t *testing.T) {
	s := pagingStore(t)
	v := s.Snapshot("c")
	nodeKey := func(n *api.Node) string { return n.Name }
	for _, limit := range []int{1, 7, 10, 25, 100} {
		got := pages(t, limit, v.ListNodes, nodeKey)
		if want := nodeNames(v.Nodes()); !slices.Equal(got, want) {
			t.Errorf("limit %d: nodes %v, want %v", limit, got, want)
		}
		got = pages(t, limit, v.ListQueues, func(q *api.Queue) string { return q.Name })
		if !slices.Equal(got, []string{"qa", "qb", "qc"}) {
			t.Errorf("limit %d: queues %v", limit, got)
		}
	}
	jobFilters := map[string][]string{
		"":   jobKeys(v.Jobs()),
		"qb": jobKeys(v.JobsInQueue("qb")),
		"qa": jobKeys(v.JobsInQueue("qa")),
		"qc": nil,
	}
	for q, want := range jobFilters {
		for _, limit := range []int{1, 3, 5, 50} {
			got := pages(t, limit, func(after string, limit int) ([]*api.Job, string) {
				return v.ListJobs(after, limit, JobFilter{Queue: q})
			}, (*api.Job).Key)
			if !slices.Equal(got, want) {
				t.Errorf("queue %q limit %d: jobs %v, want %v", q, limit, got, want)
			}
		}
	}
	onN01InJob05 := []string{}
	for _, tk := range v.TasksOfJob("ns/j05") {
		if tk.Node == "n01" {
			onN01InJob05 = append(onN01InJob05, tk.Key())
		}
	}
	taskFilters := []struct {
		f    TaskFilter
		want []string
	}{
		{TaskFilter{}, taskKeys(v.Tasks())},
		{TaskFilter{Job: "ns/j05"}, taskKeys(v.TasksOfJob("ns/j05"))},
		{TaskFilter{Node: "n03"}, taskKeys(v.TasksOnNode("n03"))},
		{TaskFilter{Job: "ns/j05", Node: "n01"}, onN01InJob05},
		{TaskFilter{Job: "ns/j05", Node: "n04"}, nil},
		{TaskFilter{Job: "ns/nope"}, nil},
		{TaskFilter{Statuses: []api.TaskStatus{api.Pending}}, keysWhere(v.Tasks(), func(t *api.Task) bool { return t.Status == api.Pending })},
		{TaskFilter{Statuses: []api.TaskStatus{api.Pending, api.Running}}, taskKeys(v.Tasks())},
		{TaskFilter{Statuses: []api.TaskStatus{api.Failed}}, nil},
		{TaskFilter{Job: "ns/j05", Statuses: []api.TaskStatus{api.Running}}, []string{"ns/j05-t0", "ns/j05-t1"}},
		{TaskFilter{Job: "ns/j05", Node: "n01", Statuses: []api.TaskStatus{api.Pending}}, nil},
		{TaskFilter{Node: "n03", Statuses: []api.TaskStatus{api.Running}}, taskKeys(v.TasksOnNode("n03"))},
		{TaskFilter{Node: "n03", Statuses: []api.TaskStatus{api.Pending}}, nil},
	}
	for _, tt := range taskFilters {
		for _, limit := range []int{1, 2, 4, 100} {
			got := pages(t, limit, func(after string, limit int) ([]*api.Task, string) {
				return v.ListTasks(after, limit, tt.f)
			}, (*api.Task).Key)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%+v limit %d: tasks %v, want %v", tt.f, limit, got, tt.want)
			}
		}
	}
	// limit <= 0 lists everything; a cursor need not exist any more.
	if items, next := v.ListNodes("", 0); len(items) != 25 || next != "" {
		t.Errorf("ListNodes(\"\", 0) = %d items, next %q", len(items), next)
	}
	if items, _ := v.ListNodes("n10x", 3); !slices.Equal(nodeNames(items), []string{"n11", "n12", "n13"}) {
		t.Errorf("ListNodes after a missing key = %v", nodeNames(items))
	}
	if items, next := v.ListNodes("n24", 3); len(items) != 0 || next != "" {
		t.Errorf("ListNodes after the last = %v, %q", nodeNames(items), next)
	}
	if items, next := v.ListNodes("zzz", 3); len(items) != 0 || next != "" {
		t.Errorf("ListNodes past the end = %v, %q (the next cluster must not leak in)", nodeNames(items), next)
	}
	// Exactly one full page: no next cursor, since nothing follows.
	if items, next := v.ListQueues("", 3); len(items) != 3 || next != "" {
		t.Errorf("ListQueues(\"\", 3) = %v, next %q", queueNames(items), next)
	}
}

// keysWhere returns the keys of the tasks that keep accepts.
func keysWhere(ts []*api.Task, keep func(*api.Task) bool) []string {
	var out []string
	for _, t := range ts {
		if keep(t) {
			out = append(out, t.Key())
		}
	}
	return out
}

func TestListJobsByPhase(t *testing.T) {
	s := New()
	phases := []api.JobPhase{api.JobPending, api.JobRunning, api.JobPending, api.JobCompleted, api.JobRunning}
	cs := []Change{queue("qa", ""), queue("qb", "")}
	for i, ph := range phases {
		q := "qa"
		if i%2 == 1 {
			q = "qb"
		}
		c := job("ns", fmt.Sprintf("j%d", i), q)
		c.Job.Phase = ph
		cs = append(cs, c)
	}
	mustApply(t, s, "c", cs...)
	v := s.Snapshot("c")
	tests := []struct {
		f    JobFilter
		want []string
	}{
		{JobFilter{Phases: []api.JobPhase{api.JobPending}}, []string{"ns/j0", "ns/j2"}},
		{JobFilter{Phases: []api.JobPhase{api.JobRunning, api.JobCompleted}}, []string{"ns/j1", "ns/j3", "ns/j4"}},
		{JobFilter{Queue: "qb", Phases: []api.JobPhase{api.JobRunning}}, []string{"ns/j1"}},
		{JobFilter{Queue: "qa", Phases: []api.JobPhase{api.JobRunning}}, []string{"ns/j4"}},
		{JobFilter{Phases: []api.JobPhase{api.JobUnknown}}, nil},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 2, 10} {
			got := pages(t, limit, func(after string, limit int) ([]*api.Job, string) {
				return v.ListJobs(after, limit, tt.f)
			}, (*api.Job).Key)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%+v limit %d: jobs %v, want %v", tt.f, limit, got, tt.want)
			}
		}
	}
}
