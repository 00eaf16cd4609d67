package extender

import (
	"errors"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Volcano's status codes (api.Status) in a predicate response.
const (
	codeSuccess                      = 0
	codeError                        = 1
	codeUnschedulable                = 2
	codeUnschedulableAndUnresolvable = 3
)

// predicateFn asks the extender whether the task fits the node. A non-empty errorMessage
// rejects the node with the response's code; a failed call rejects it (InternalError) unless
// the extender is ignorable.
func (p *plugin) predicateFn(task *api.TaskInfo, node *api.NodeInfo) error {
	if !p.interested(task) {
		return nil
	}
	var resp PredicateResponse
	if err := p.send(p.cfg.predicate, &PredicateRequest{Task: newTask(task), Node: newNode(node)}, &resp); err != nil {
		if p.cfg.ignorable {
			p.ssn.Log.Warn("extender: predicate failed, ignored", "task", task.UID, "node", node.Name, "err", err)
			return nil
		}
		return api.NewFitError(node.Name, api.InternalError, "extender predicate failed: "+err.Error())
	}
	if resp.ErrorMessage == "" {
		return nil
	}
	return api.NewFitError(node.Name, fitCode(resp.Code), resp.ErrorMessage)
}

// fitCode maps Volcano's status code to a fit code: Success (with a message, as Volcano keeps
// compatibility with old extenders) and Error are internal errors.
func fitCode(code int) api.FitCode {
	switch code {
	case codeSuccess, codeError:
		return api.InternalError
	case codeUnschedulableAndUnresolvable:
		return api.UnschedulableAndUnresolvable
	}
	return api.Unschedulable
}

// prioritizeFn asks the extender to score the nodes. A failed call is an error (the batch
// scores of the cycle are dropped, as in Volcano) unless the extender is ignorable; an
// errorMessage is an error either way.
func (p *plugin) prioritizeFn(task *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
	if !p.interested(task) {
		return nil, nil
	}
	req := &PrioritizeRequest{Task: newTask(task), Nodes: make([]*Node, 0, len(nodes))}
	for _, n := range nodes {
		req.Nodes = append(req.Nodes, newNode(n))
	}
	var resp PrioritizeResponse
	if err := p.send(p.cfg.prioritize, req, &resp); err != nil {
		if p.cfg.ignorable {
			p.ssn.Log.Warn("extender: prioritize failed, ignored", "task", task.UID, "err", err)
			return nil, nil
		}
		return nil, err
	}
	if resp.ErrorMessage != "" {
		return nil, errors.New("extender prioritize: " + resp.ErrorMessage)
	}
	return resp.NodeScore, nil
}

// evictableFn asks the extender which evictees the evictor may evict. The response's victims
// are matched to the evictees by uid (or namespace and name) and returned in evictee order.
// A failed call rejects (no victims) unless the extender is ignorable, when it abstains.
func (p *plugin) evictableFn(verb string) framework.EvictableFn {
	return func(evictor *api.TaskInfo, evictees []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		req := &EvictableRequest{Evictor: newTask(evictor), Evictees: make([]*Task, 0, len(evictees))}
		for _, t := range evictees {
			req.Evictees = append(req.Evictees, newTask(t))
		}
		var resp EvictableResponse
		if err := p.send(verb, req, &resp); err != nil {
			if p.cfg.ignorable {
				p.ssn.Log.Warn("extender: "+verb+" failed, ignored", "evictor", evictor.UID, "err", err)
				return nil, framework.Abstain
			}
			p.ssn.Log.Warn("extender: "+verb+" failed", "evictor", evictor.UID, "err", err)
			return nil, framework.Reject
		}
		chosen := make(map[string]bool, len(resp.Victims))
		for _, v := range resp.Victims {
			chosen[v.key()] = true
		}
		var victims []*api.TaskInfo
		for _, t := range evictees {
			if chosen[t.UID] {
				victims = append(victims, t)
			}
		}
		return victims, vote(resp.Status)
	}
}

// jobEnqueueableFn asks the extender to vote on enqueueing the job. A failed call rejects
// unless the extender is ignorable, when it abstains.
func (p *plugin) jobEnqueueableFn(job *api.JobInfo) framework.Vote {
	var resp JobEnqueueableResponse
	if err := p.send(p.cfg.jobEnqueueable, &JobRequest{Job: newJob(job)}, &resp); err != nil {
		if p.cfg.ignorable {
			p.ssn.Log.Warn("extender: jobEnqueueable failed, ignored", "job", job.UID, "err", err)
			return framework.Abstain
		}
		p.ssn.Log.Warn("extender: jobEnqueueable failed", "job", job.UID, "err", err)
		return framework.Reject
	}
	return vote(resp.Status)
}

// queueOverusedFn asks the extender whether the queue is overused. A failed call says
// overused unless the extender is ignorable.
func (p *plugin) queueOverusedFn(q *api.QueueInfo) bool {
	var resp QueueOverusedResponse
	if err := p.send(p.cfg.queueOverused, &QueueRequest{Queue: newQueue(q)}, &resp); err != nil {
		p.ssn.Log.Warn("extender: queueOverused failed", "queue", q.Name, "ignorable", p.cfg.ignorable, "err", err)
		return !p.cfg.ignorable
	}
	return resp.Overused
}

// jobReadyFn asks the extender whether the job is ready. A failed call says not ready unless
// the extender is ignorable. (Volcano returns !ignorable here, copied from queueOverused: a
// failing non-ignorable extender would make every job ready and an ignorable one none.)
func (p *plugin) jobReadyFn(job *api.JobInfo) bool {
	var resp JobReadyResponse
	if err := p.send(p.cfg.jobReady, &JobRequest{Job: newJob(job)}, &resp); err != nil {
		p.ssn.Log.Warn("extender: jobReady failed", "job", job.UID, "ignorable", p.cfg.ignorable, "err", err)
		return p.cfg.ignorable
	}
	return resp.Status
}

// notify tells the extender about an allocation or deallocation; a failure is only logged.
func (p *plugin) notify(verb string, ev *framework.Event) {
	if err := p.send(verb, &EventRequest{Task: newTask(ev.Task)}, nil); err != nil {
		p.ssn.Log.Warn("extender: "+verb+" failed", "task", ev.Task.UID, "err", err)
	}
}

// vote maps Volcano's vote (util.Permit 1, util.Abstain 0, util.Reject -1).
func vote(status int) framework.Vote {
	switch {
	case status > 0:
		return framework.Permit
	case status < 0:
		return framework.Reject
	}
	return framework.Abstain
}
