package api

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// naiveRoleCounts is the definition the incremental counts must agree with: a walk of every
// task of the job.
func naiveRoleCounts(ji *JobInfo, keep func(TaskStatus) bool, countBestEffort bool) map[string]int32 {
	out := map[string]int32{}
	for _, t := range ji.Tasks {
		if keep(t.Status) || (countBestEffort && t.Status == Pending && t.BestEffort) {
			out[t.Role]++
		}
	}
	return out
}

func naiveMeetMin(ji *JobInfo, counts map[string]int32) bool {
	for role, min := range ji.TaskMinAvailable {
		if counts[role] < min {
			return false
		}
	}
	return true
}

// naive answers every incrementally counted question by walking the job's tasks.
func naive(ji *JobInfo) map[string]any {
	pendingBE := int32(0)
	for _, t := range ji.Tasks {
		if t.Status == Pending && t.BestEffort {
			pendingBE++
		}
	}
	gated := len(ji.TaskMinAvailable) == 0 || ji.MinAvailable < ji.TaskMinAvailableTotal
	valid := gated || naiveMeetMin(ji, naiveRoleCounts(ji, func(s TaskStatus) bool { return pipelinedStatus(s) || s == Pending }, false))
	ready := gated || naiveMeetMin(ji, naiveRoleCounts(ji, readyStatus, true))
	piped := gated || naiveMeetMin(ji, naiveRoleCounts(ji, pipelinedStatus, true))
	starving := ji.MinAvailable < ji.TaskMinAvailableTotal ||
		(len(ji.TaskMinAvailable) > 0 && !naiveMeetMin(ji, naiveRoleCounts(ji, pipelinedStatus, false)))
	byStatus := map[TaskStatus]int32{}
	for _, t := range ji.Tasks {
		byStatus[t.Status]++
	}
	return map[string]any{
		"ReadyTaskNum":             byStatus[Bound] + byStatus[Binding] + byStatus[Running] + byStatus[Allocated] + byStatus[Succeeded],
		"WaitingTaskNum":           byStatus[Pipelined],
		"ValidTaskNum":             byStatus[Bound] + byStatus[Binding] + byStatus[Running] + byStatus[Allocated] + byStatus[Succeeded] + byStatus[Pipelined] + byStatus[Pending],
		"PendingTaskNum":           byStatus[Pending],
		"PendingBestEffortTaskNum": pendingBE,
		"CheckTaskValid":           valid,
		"CheckTaskReady":           ready,
		"CheckTaskPipelined":       piped,
		"CheckTaskStarving":        starving,
		"NeedContinueAllocating":   naiveNeedContinue(ji),
	}
}

// naiveNeedContinue is NeedContinueAllocating as it was written before the counts: pending
// tasks and placed tasks per role counted by walking the job.
func naiveNeedContinue(ji *JobInfo) bool {
	if int(ji.MinAvailable) == len(ji.Tasks) {
		return false
	}
	failed := ji.FitFailedRoles()
	pending := map[string]int32{}
	for _, t := range ji.TaskStatusIndex[Pending] {
		pending[t.Role]++
	}
	if ji.MinAvailable < ji.TaskMinAvailableTotal {
		left := int32(0)
		for role, n := range pending {
			if _, ok := failed[role]; !ok {
				left += n
			}
		}
		return ji.ReadyTaskNum()+left >= ji.MinAvailable
	}
	allocated := naiveRoleCounts(ji, readyStatus, true)
	for role := range failed {
		if min := ji.TaskMinAvailable[role]; min > 0 && allocated[role] < min {
			return false
		}
	}
	return true
}

func counted(ji *JobInfo) map[string]any {
	return map[string]any{
		"ReadyTaskNum":             ji.ReadyTaskNum(),
		"WaitingTaskNum":           ji.WaitingTaskNum(),
		"ValidTaskNum":             ji.ValidTaskNum(),
		"PendingTaskNum":           ji.PendingTaskNum(),
		"PendingBestEffortTaskNum": ji.PendingBestEffortTaskNum(),
		"CheckTaskValid":           ji.CheckTaskValid(),
		"CheckTaskReady":           ji.CheckTaskReady(),
		"CheckTaskPipelined":       ji.CheckTaskPipelined(),
		"CheckTaskStarving":        ji.CheckTaskStarving(),
		"NeedContinueAllocating":   ji.NeedContinueAllocating(),
	}
}

// TestJobCountsMatchAWalk drives jobs through random additions, status changes and removals of
// tasks of several roles, some best-effort, and requires every count-based answer to equal the
// answer of a walk over the job's tasks, after every step and in a clone.
func TestJobCountsMatchAWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	roles := []string{"ps", "worker", "chief"}
	statuses := []TaskStatus{Pending, Allocated, Pipelined, Binding, Bound, Running, Releasing, Succeeded, Failed, Unknown}
	for trial := 0; trial < 200; trial++ {
		byRole := map[string]int32{}
		for _, r := range roles[:rng.IntN(len(roles)+1)] {
			byRole[r] = int32(rng.IntN(3))
		}
		ji := NewJobInfo(&Job{Name: "j", Namespace: "ns", MinAvailable: int32(rng.IntN(6)), MinAvailableByRole: byRole}, 0)
		if trial%2 == 0 {
			ji.ExpectTasks(rng.IntN(8)) // sized for fewer or more tasks than come
		}
		var tasks []*TaskInfo
		for step := 0; step < 60; step++ {
			switch op := rng.IntN(10); {
			case op < 4 || len(tasks) == 0:
				res := map[string]float64{"cpu": 1}
				if rng.IntN(3) == 0 {
					res = nil // best effort
				}
				ti := NewTaskInfo(&Task{Name: fmt.Sprintf("t%d", step), Namespace: "ns", Job: "j", Role: roles[rng.IntN(len(roles))],
					Status: statuses[rng.IntN(len(statuses))], Resources: *NewResource(res)}, 0)
				ji.AddTaskInfo(ti)
				tasks = append(tasks, ti)
			case op < 8:
				ji.UpdateTaskStatus(tasks[rng.IntN(len(tasks))], statuses[rng.IntN(len(statuses))])
			case op < 9:
				i := rng.IntN(len(tasks))
				ji.DeleteTaskInfo(tasks[i])
				tasks = append(tasks[:i], tasks[i+1:]...)
			default:
				if len(tasks) > 0 {
					ji.NodesFitErrors[tasks[rng.IntN(len(tasks))].UID] = NewFitErrors()
				}
			}
			sorted := make([]*TaskInfo, 0, len(ji.Tasks))
			for _, t := range ji.Tasks {
				sorted = append(sorted, t)
			}
			slices.SortFunc(sorted, func(a, b *TaskInfo) int { return strings.Compare(a.UID, b.UID) })
			if got := ji.SortedTasks(); !slices.Equal(got, sorted) {
				t.Fatalf("trial %d step %d: SortedTasks is not the job's tasks by UID", trial, step)
			}
			for _, st := range statuses {
				var in []*TaskInfo
				for _, t := range sorted {
					if t.Status == st {
						in = append(in, t)
					}
				}
				if got := ji.TasksIn(st); !slices.Equal(got, in) {
					t.Fatalf("trial %d step %d: TasksIn(%v) is not the job's tasks in it by UID", trial, step, st)
				}
			}
			want, got := naive(ji), counted(ji)
			for k, w := range want {
				if got[k] != w {
					t.Fatalf("trial %d step %d: %s = %v, a walk of the tasks says %v", trial, step, k, got[k], w)
				}
			}
		}
		c := ji.Clone()
		c.NodesFitErrors = ji.NodesFitErrors
		want, got := naive(ji), counted(c)
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("trial %d clone: %s = %v, want %v", trial, k, got[k], w)
			}
		}
	}
}

// jobTwins builds two equal jobs of n tasks with fractional requests (so that the order of
// additions shows in the sums), in random statuses among the given ones.
func jobTwins(rng *rand.Rand, n int, statuses []TaskStatus) (a, b *JobInfo) {
	a = NewJobInfo(&Job{Name: "j", Namespace: "ns", MinAvailable: 1}, 0)
	b = NewJobInfo(&Job{Name: "j", Namespace: "ns", MinAvailable: 1}, 0)
	for i := 0; i < n; i++ {
		spec := &Task{Name: fmt.Sprintf("t%02d", i), Namespace: "ns", Job: "j", Status: statuses[rng.IntN(len(statuses))],
			Resources: *NewResource(map[string]float64{"cpu": rng.Float64() * 3, "memory": rng.Float64() * 1e9})}
		a.AddTaskInfo(NewTaskInfo(spec, 0))
		b.AddTaskInfo(NewTaskInfo(spec, 0))
	}
	return a, b
}

// jobState renders what RestatusAll must leave as UpdateTaskStatus would: each status's
// index, every task's status, the sums bit for bit, the counts and the version.
func jobState(ji *JobInfo) string {
	var out []string
	for st, idx := range ji.TaskStatusIndex {
		for uid, t := range idx {
			out = append(out, fmt.Sprintf("index %v %s %v", st, uid, t.Status))
		}
	}
	for uid, t := range ji.Tasks {
		out = append(out, fmt.Sprintf("task %s %v", uid, t.Status))
	}
	slices.Sort(out)
	out = append(out, fmt.Sprintf("sums %b %b %b %b", ji.TotalRequest.MilliCPU, ji.TotalRequest.Memory, ji.Allocated.MilliCPU, ji.Allocated.Memory),
		fmt.Sprint(counted(ji)), fmt.Sprint(ji.byStatus, ji.Version(), len(ji.TaskStatusIndex)))
	return strings.Join(out, "\n")
}

// TestRestatusAllMatchesOneByOne moves every task of a status at once and checks that the
// job ends as moving them one by one in the same order leaves it; a move of some of them, or
// into a status that has tasks, must be refused and change nothing.
func TestRestatusAllMatchesOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	statuses := []TaskStatus{Pending, Allocated, Pipelined, Binding, Running}
	for trial := 0; trial < 300; trial++ {
		a, b := jobTwins(rng, 1+rng.IntN(20), statuses)
		from, to := statuses[rng.IntN(len(statuses))], statuses[rng.IntN(len(statuses))]
		var moved []string
		for uid, ti := range a.Tasks {
			if ti.Status == from {
				moved = append(moved, uid)
			}
		}
		rng.Shuffle(len(moved), func(i, j int) { moved[i], moved[j] = moved[j], moved[i] })
		partial := len(moved) > 1 && rng.IntN(4) == 0
		if partial {
			moved = moved[1:]
		}
		before := jobState(a)
		ok := a.RestatusAll(from, to, len(moved), func(i int) *TaskInfo { return a.Tasks[moved[i]] })
		refuse := partial || len(moved) == 0 || from == to || len(b.TaskStatusIndex[to]) > 0
		if ok == refuse {
			t.Fatalf("trial %d: RestatusAll(%v -> %v) of %d tasks answered %v", trial, from, to, len(moved), ok)
		}
		if !ok {
			if after := jobState(a); after != before {
				t.Fatalf("trial %d: a refused RestatusAll changed the job:\n%s\nwas\n%s", trial, after, before)
			}
			continue
		}
		for _, uid := range moved {
			b.UpdateTaskStatus(b.Tasks[uid], to)
		}
		if ga, gb := jobState(a), jobState(b); ga != gb {
			t.Fatalf("trial %d: RestatusAll(%v -> %v) left\n%s\none by one leaves\n%s", trial, from, to, ga, gb)
		}
	}
}

// TestIndexPoolSharesNoMap moves the tasks of several jobs through statuses with one pool,
// and twins of them without, and checks that the jobs end alike and that no index map is
// held by two jobs (or two statuses) at once.
func TestIndexPoolSharesNoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	statuses := []TaskStatus{Pending, Allocated, Pipelined, Binding}
	for trial := 0; trial < 50; trial++ {
		var pool IndexPool
		var pooled, plain []*JobInfo
		for j := 0; j < 4; j++ {
			a, b := jobTwins(rng, 1+rng.IntN(12), statuses[:1])
			pooled, plain = append(pooled, a), append(plain, b)
		}
		for step := 0; step < 200; step++ {
			j := rng.IntN(len(pooled))
			uid := fmt.Sprintf("ns/t%02d", rng.IntN(len(pooled[j].Tasks)))
			to := statuses[rng.IntN(len(statuses))]
			pooled[j].UpdateTaskStatusIn(pooled[j].Tasks[uid], to, &pool)
			plain[j].UpdateTaskStatus(plain[j].Tasks[uid], to)
			holder := map[uintptr]string{}
			for i := range pooled {
				if ga, gb := jobState(pooled[i]), jobState(plain[i]); ga != gb {
					t.Fatalf("trial %d step %d: job %d with the pool\n%s\nwithout\n%s", trial, step, i, ga, gb)
				}
				for st, idx := range pooled[i].TaskStatusIndex {
					p := reflect.ValueOf(idx).Pointer()
					if h, ok := holder[p]; ok {
						t.Fatalf("trial %d step %d: job %d's %v index is also %s's", trial, step, i, st, h)
					}
					holder[p] = fmt.Sprintf("job %d's %v index", i, st)
				}
			}
			for _, m := range pool.free {
				if len(m) != 0 || holder[reflect.ValueOf(m).Pointer()] != "" {
					t.Fatalf("trial %d step %d: a pooled map is in use", trial, step)
				}
			}
		}
	}
}
