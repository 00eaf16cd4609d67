package util

import (
	"math"
	"runtime"
	"sync"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// PredicateFn is a node filter for one task.
type PredicateFn func(task *api.TaskInfo, node *api.NodeInfo) error

// parallelThreshold is the node count from which filtering and scoring fan out to workers.
// Plugins' predicate and score callbacks must then be safe for concurrent calls on different
// nodes; until every plugin is audited for that, fan-out stays off (math.MaxInt).
const parallelThreshold = math.MaxInt

// PredicateNodes returns the nodes that pass fn, in the order given, and the fit errors of
// the others.
func PredicateNodes(task *api.TaskInfo, nodes []*api.NodeInfo, fn PredicateFn) ([]*api.NodeInfo, *api.FitErrors) {
	fe := api.NewFitErrors()
	fe.Total = len(nodes)
	errs := make([]error, len(nodes))
	forEach(len(nodes), func(i int) { errs[i] = fn(task, nodes[i]) })
	var ok []*api.NodeInfo
	for i, n := range nodes {
		if errs[i] != nil {
			fe.SetNodeError(n.Name, errs[i])
			continue
		}
		ok = append(ok, n)
	}
	return ok, fe
}

// forEach calls f for 0..n-1, in parallel chunks when n is large.
func forEach(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < parallelThreshold || workers < 2 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// PrioritizeNodes scores nodes with the session's node order and batch node order callbacks.
// A node whose scoring fails scores 0, as in Volcano.
func PrioritizeNodes(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo) []float64 {
	scores := make([]float64, len(nodes))
	if !ssn.HasNodeOrder() {
		return scores
	}
	forEach(len(nodes), func(i int) {
		s, err := ssn.NodeOrderFn(task, nodes[i])
		if err == nil {
			scores[i] = s
		}
	})
	batch, err := ssn.BatchNodeOrderFn(task, nodes)
	if err == nil {
		for i, n := range nodes {
			scores[i] += batch[n.Name]
		}
	}
	return scores
}

// SelectBestNode asks the best-node callbacks, then takes the highest score; among equal
// scores the first node in the given (name) order wins.
func SelectBestNode(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) *api.NodeInfo {
	if len(nodes) == 0 {
		return nil
	}
	if ssn.HasBestNode() {
		byScore := map[float64][]*api.NodeInfo{}
		for i, n := range nodes {
			byScore[scores[i]] = append(byScore[scores[i]], n)
		}
		if n := ssn.BestNodeFn(task, byScore); n != nil {
			return n
		}
	}
	best := 0
	for i := 1; i < len(nodes); i++ {
		if scores[i] > scores[best] {
			best = i
		}
	}
	return nodes[best]
}

// BestNode filters nothing: it scores the nodes and picks the best (one node is taken as is).
func BestNode(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo) *api.NodeInfo {
	switch len(nodes) {
	case 0:
		return nil
	case 1:
		return nodes[0]
	}
	return SelectBestNode(ssn, task, nodes, PrioritizeNodes(ssn, task, nodes))
}

// ResourceFit reports whether the task's request fits in the node's future idle resources
// (idle + releasing - pipelined), as allocate's built-in resource check, with a reason naming
// the short dimensions. It does not count pod slots.
func ResourceFit(task *api.TaskInfo, node *api.NodeInfo) error {
	// Pod slots are the predicates' to judge (with every other reason), as in Volcano, whose
	// resource check ignores the pods dimension.
	if node.FutureIdleHolds(task.InitResreq) {
		return nil
	}
	fi := node.FutureIdle()
	reasons := []string{}
	for _, r := range fi.Insufficient(task.InitResreq) {
		reasons = append(reasons, "insufficient "+r)
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "insufficient resources")
	}
	return api.NewFitError(node.Name, api.Unschedulable, reasons...)
}
