package conformance

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "conformance"

// Protected namespace and priority classes, as Kubernetes names them.
const (
	SystemNamespace       = "kube-system"
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
)

type plugin struct{}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

func (*plugin) OnSessionOpen(ssn *framework.Session) {
	evictable := func(_ *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return notCritical(candidates), framework.Permit
	}
	ssn.AddPreemptableFn(Name, evictable)
	ssn.AddReclaimableFn(Name, evictable)
	ssn.AddUnifiedEvictableFn(Name, func(_ *framework.EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return notCritical(candidates), framework.Permit
	})
}

// notCritical keeps, in order, the candidates that are not critical.
func notCritical(candidates []*api.TaskInfo) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, c := range candidates {
		if !Critical(c) {
			out = append(out, c)
		}
	}
	return out
}

func (*plugin) OnSessionClose(*framework.Session) {}

// Critical reports whether a task must never be evicted.
func Critical(t *api.TaskInfo) bool {
	if t.Namespace == SystemNamespace {
		return true
	}
	class := ""
	if t.Spec != nil {
		class = t.Spec.PriorityClass
	}
	return class == SystemClusterCritical || class == SystemNodeCritical
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)
