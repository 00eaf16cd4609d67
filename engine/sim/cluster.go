package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// DefaultMemoryPerCore is the memory SWFNodes gives each core when asked for none: 4 GiB.
const DefaultMemoryPerCore = 4 << 30

// SWFNodes makes the nodes an SWF header describes: MaxNodes nodes (or MaxProcs/cores of
// them) of coresPerNode cores (0: MaxProcs/MaxNodes), memoryPerNode bytes (0:
// DefaultMemoryPerCore per core) and room for max(110, cores) tasks, named node-0001, ...
func SWFNodes(h SWFHeader, coresPerNode int, memoryPerNode float64) ([]*api.Node, error) {
	nodes, cores := h.MaxNodes, coresPerNode
	switch {
	case cores <= 0 && h.MaxNodes > 0 && h.MaxProcs > 0:
		cores = h.MaxProcs / h.MaxNodes
	case nodes <= 0 && cores > 0 && h.MaxProcs > 0:
		nodes = h.MaxProcs / cores
	}
	if nodes <= 0 || cores <= 0 {
		return nil, errors.New("the trace's header gives no MaxNodes and MaxProcs (nor MaxProcs and the cores per node): give a cluster file")
	}
	if memoryPerNode <= 0 {
		memoryPerNode = float64(cores) * DefaultMemoryPerCore
	}
	width := len(fmt.Sprint(nodes))
	out := make([]*api.Node, nodes)
	for i := range out {
		out[i] = &api.Node{
			Name: fmt.Sprintf("node-%0*d", max(width, 4), i+1),
			Allocatable: api.Resource{MilliCPU: float64(cores) * 1000, Memory: memoryPerNode,
				MaxTaskNum: max(110, cores)},
		}
	}
	return out, nil
}

// TraceQueues makes a queue (weight 1, open, reclaimable) for every queue the trace names,
// sorted by name.
func TraceQueues(tr *Trace) []*api.Queue {
	var names []string
	for _, j := range tr.Jobs {
		if !slices.Contains(names, j.Queue) {
			names = append(names, j.Queue)
		}
	}
	slices.Sort(names)
	out := make([]*api.Queue, len(names))
	for i, n := range names {
		out[i] = &api.Queue{Name: n, Weight: 1, State: api.QueueOpen, Reclaimable: true}
	}
	return out
}

// Problems are what Check finds in a simulation's inputs: Errors stop the run; Warnings
// (jobs that can never run) do not.
type Problems struct {
	Errors   []string
	Warnings []string
	// NeverFits maps the key of each job that can never run to why.
	NeverFits map[string]string
}

// Err returns the errors as one error, or nil.
func (p *Problems) Err() error {
	if len(p.Errors) == 0 {
		return nil
	}
	return errors.New(strings.Join(p.Errors, "\n"))
}

// maxListed bounds the problems of one kind that Check lists one by one.
const maxListed = 20

// Check looks at a simulation's inputs before it runs: the cluster must be accepted by the
// store; every job's queue and priority class must exist; every configuration must be valid
// for the registry (and its queues acceptable). Jobs larger than the cluster (a task larger
// than every node, or more than the whole cluster in all) are warnings: they will never
// start, and are reported as such.
func Check(cluster []state.Change, tr *Trace, configs []Config, reg *framework.Registry) *Problems {
	p := &Problems{NeverFits: map[string]string{}}
	st := state.New()
	if _, err := st.Apply(clusterName, state.Batch{ReplaceAll: true, Changes: cluster}); err != nil {
		p.Errors = append(p.Errors, fmt.Sprintf("the cluster: %v", err))
		return p
	}
	snap := st.Snapshot(clusterName)
	queues := map[string]bool{}
	for _, q := range snap.Queues() {
		queues[q.Name] = true
	}
	classes := map[string]bool{"system-cluster-critical": true, "system-node-critical": true}
	for _, pc := range snap.PriorityClasses() {
		classes[pc.Name] = true
	}
	for _, c := range configs {
		if c.Scheduler == nil {
			p.Errors = append(p.Errors, fmt.Sprintf("configuration %s: no scheduler configuration", c.Name))
		} else if err := reg.Validate(c.Scheduler); err != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("configuration %s: invalid: %v", c.Name, err))
		}
		if len(c.Queues) > 0 {
			if _, err := state.New().Apply(clusterName, state.Batch{ReplaceAll: true, Changes: withQueues(cluster, c.Queues)}); err != nil {
				p.Errors = append(p.Errors, fmt.Sprintf("configuration %s: its queues: %v", c.Name, err))
			}
		}
	}
	var unknown, classless []string
	nodes := snap.Nodes()
	total := api.EmptyResource()
	for _, n := range nodes {
		if !n.Unschedulable {
			total.Add(&n.Allocatable)
		}
	}
	for _, j := range tr.Jobs {
		if why := unknownQueue(configs, j.Queue); !queues[j.Queue] && why != "" {
			unknown = append(unknown, fmt.Sprintf("job %s (line %d): %s", j.Key(), j.Line, why))
		}
		if j.PriorityClass != "" && !classes[j.PriorityClass] {
			classless = append(classless, fmt.Sprintf("job %s (line %d): priority class %q is not in the cluster", j.Key(), j.Line, j.PriorityClass))
		}
		if why := neverFits(j, nodes, total); why != "" {
			p.NeverFits[j.Key()] = why
			p.Warnings = append(p.Warnings, fmt.Sprintf("job %s (line %d) will never start: %s", j.Key(), j.Line, why))
		}
	}
	p.Errors = append(p.Errors, capList(unknown)...)
	p.Errors = append(p.Errors, capList(classless)...)
	p.Warnings = capList(p.Warnings)
	return p
}

// unknownQueue says why queue q, which the cluster lacks, stops the run: every configuration
// without a queue of that name of its own would meet jobs of a queue it does not have. It
// returns "" when every configuration adds the queue.
func unknownQueue(configs []Config, q string) string {
	var without []string
	for _, c := range configs {
		if !slices.ContainsFunc(c.Queues, func(x *api.Queue) bool { return x.Name == q }) {
			without = append(without, c.Name)
		}
	}
	switch {
	case len(configs) > 0 && len(without) == 0:
		return ""
	case len(without) < len(configs):
		return fmt.Sprintf("queue %q is not in the cluster, nor in configuration %s", q, strings.Join(without, ", "))
	}
	return fmt.Sprintf("queue %q is not in the cluster", q)
}

// capList keeps the first maxListed lines and counts the rest.
func capList(lines []string) []string {
	if len(lines) <= maxListed {
		return lines
	}
	return append(lines[:maxListed:maxListed], fmt.Sprintf("... and %d more", len(lines)-maxListed))
}

// neverFits says why a job can never run on the nodes, or "".
func neverFits(j *Job, nodes []*api.Node, total *api.Resource) string {
	if need := j.Request(); !need.LessEqual(total, api.Zero) {
		return fmt.Sprintf("it needs %s in all, the cluster's schedulable nodes have %s", need, total)
	}
	for _, g := range j.Tasks {
		fits := false
		for _, n := range nodes {
			if !n.Unschedulable && g.Resources.LessEqual(&n.Allocatable, api.Zero) {
				fits = true
				break
			}
		}
		if !fits {
			return fmt.Sprintf("a task needs %s, more than any schedulable node has", g.Resources.String())
		}
	}
	return ""
}
