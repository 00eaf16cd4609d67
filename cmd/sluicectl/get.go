package main

import (
	"fmt"
	"strconv"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// listPageSize is the page size asked of List calls.
const listPageSize = 500

// pages collects every page of a List call, following next_page_token
// until it is empty.
func pages[T any](fetch func(token string) ([]T, string, error)) ([]T, error) {
	var all []T
	token := ""
	for n := 0; ; n++ {
		items, next, err := fetch(token)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if next == token || n > 1_000_000 {
			return nil, fmt.Errorf("the server keeps returning page token %q", next)
		}
		token = next
	}
}

// get prints nodes, queues, jobs, tasks or clusters.
func (a *app) get(args []string) error {
	fs := a.flags("get")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) == 0 || len(pos) > 2 {
		return usagef("get: expected nodes, queues, jobs, tasks or clusters and an optional name")
	}
	kind, name := pos[0], ""
	if len(pos) == 2 {
		name = pos[1]
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := sluicev1.NewClusterStateServiceClient(conn)
	op := "get " + kind
	structured := *out != "table"

	switch kind {
	case "clusters", "cluster":
		return a.getClusters(c, name, *out)

	case "nodes", "node":
		var nodes []*sluicev1.Node
		if name != "" {
			resp, err := c.GetNode(a.ctx, &sluicev1.GetNodeRequest{Cluster: a.cluster, Name: name})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProto(a.stdout, *out, resp.GetNode())
			}
			nodes = []*sluicev1.Node{resp.GetNode()}
		} else {
			nodes, err = pages(func(tok string) ([]*sluicev1.Node, string, error) {
				resp, err := c.ListNodes(a.ctx, &sluicev1.ListNodesRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok})
				return resp.GetNodes(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProtoList(a.stdout, *out, nodes)
			}
		}
		return a.nodeTable(nodes)

	case "queues", "queue":
		var queues []*sluicev1.Queue
		if name != "" {
			resp, err := c.GetQueue(a.ctx, &sluicev1.GetQueueRequest{Cluster: a.cluster, Name: name})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProto(a.stdout, *out, resp.GetQueue())
			}
			queues = []*sluicev1.Queue{resp.GetQueue()}
		} else {
			queues, err = pages(func(tok string) ([]*sluicev1.Queue, string, error) {
				resp, err := c.ListQueues(a.ctx, &sluicev1.ListQueuesRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok})
				return resp.GetQueues(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProtoList(a.stdout, *out, queues)
			}
		}
		return a.queueTable(queues)

	case "jobs", "job":
		var jobs []*sluicev1.Job
		var tasks []*sluicev1.Task
		if name != "" {
			ns, n := scenario.SplitName(name)
			resp, err := c.GetJob(a.ctx, &sluicev1.GetJobRequest{Cluster: a.cluster, Namespace: ns, Name: n})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProto(a.stdout, *out, resp.GetJob())
			}
			jobs = []*sluicev1.Job{resp.GetJob()}
			tasks, err = pages(func(tok string) ([]*sluicev1.Task, string, error) {
				resp, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok, Namespace: ns, Job: n})
				return resp.GetTasks(), resp.GetNextPageToken(), err
			})
		} else {
			jobs, err = pages(func(tok string) ([]*sluicev1.Job, string, error) {
				resp, err := c.ListJobs(a.ctx, &sluicev1.ListJobsRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok})
				return resp.GetJobs(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProtoList(a.stdout, *out, jobs)
			}
			tasks, err = pages(func(tok string) ([]*sluicev1.Task, string, error) {
				resp, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok})
				return resp.GetTasks(), resp.GetNextPageToken(), err
			})
		}
		if err != nil {
			return a.rpcError("get tasks", err)
		}
		return a.jobTable(jobs, tasks)

	case "tasks", "task":
		var tasks []*sluicev1.Task
		if name != "" {
			ns, n := scenario.SplitName(name)
			resp, err := c.GetTask(a.ctx, &sluicev1.GetTaskRequest{Cluster: a.cluster, Namespace: ns, Name: n})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProto(a.stdout, *out, resp.GetTask())
			}
			tasks = []*sluicev1.Task{resp.GetTask()}
		} else {
			tasks, err = pages(func(tok string) ([]*sluicev1.Task, string, error) {
				resp, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, PageSize: listPageSize, PageToken: tok})
				return resp.GetTasks(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return a.rpcError(op, err)
			}
			if structured {
				return writeProtoList(a.stdout, *out, tasks)
			}
		}
		return a.taskTable(tasks)
	}
	return usagef("get: unknown kind %q (expected nodes, queues, jobs, tasks or clusters)", kind)
}

func (a *app) nodeTable(nodes []*sluicev1.Node) error {
	t := newTable(a.stdout, "NAME", "CPU", "MEMORY", "PODS", "GPU", "LABELS", "TAINTS")
	for _, n := range nodes {
		gpu := n.GetAllocatable()["nvidia.com/gpu"]
		if gpu == "" {
			count := 0
			for _, d := range n.GetDevices() {
				if d.GetType() == "nvidia.com/gpu" {
					count++
				}
			}
			if count > 0 {
				gpu = strconv.Itoa(count)
			}
		}
		labels := fmtLabels(n.GetLabels(), func(k, v string) bool {
			return k == "kubernetes.io/hostname" && v == n.GetName()
		})
		taints := ""
		for i, tn := range n.GetTaints() {
			if i > 0 {
				taints += ","
			}
			taints += tn.GetKey()
			if tn.GetValue() != "" {
				taints += "=" + tn.GetValue()
			}
			taints += ":" + sluice.TaintEffectName(tn.GetEffect())
		}
		name := n.GetName()
		if n.GetUnschedulable() {
			name += " (cordoned)"
		}
		t.row(name, n.GetAllocatable()["cpu"], n.GetAllocatable()["memory"], n.GetAllocatable()["pods"], gpu, labels, taints)
	}
	return t.flush()
}

func (a *app) queueTable(queues []*sluicev1.Queue) error {
	t := newTable(a.stdout, "NAME", "PARENT", "WEIGHT", "STATE", "ALLOCATED", "DESERVED", "SHARE")
	for _, q := range queues {
		parent := q.GetParent()
		if parent == "" {
			parent = "root"
		}
		weight := q.GetWeight()
		if weight == 0 {
			weight = 1
		}
		state := "Open"
		if q.GetState() != sluicev1.QueueState_QUEUE_STATE_UNSPECIFIED {
			state = enumName(q.GetState().String(), "QUEUE_STATE_")
		}
		st := q.GetStatus()
		t.row(q.GetName(), parent, strconv.Itoa(int(weight)), state,
			fmtResources(st.GetAllocated()), fmtResources(st.GetDeserved()), st.GetShare())
	}
	return t.flush()
}

func (a *app) jobTable(jobs []*sluicev1.Job, tasks []*sluicev1.Task) error {
	count := map[string]int{}
	for _, tk := range tasks {
		count[fullName(tk.GetNamespace(), tk.GetJob())]++
	}
	t := newTable(a.stdout, "NAME", "QUEUE", "PHASE", "MIN", "PRIORITY", "TASKS")
	for _, j := range jobs {
		queue := j.GetQueue()
		if queue == "" {
			queue = "default"
		}
		prio := j.GetPriorityClass()
		switch {
		case j.Priority != nil && prio != "":
			prio = fmt.Sprintf("%d (%s)", j.GetPriority(), prio)
		case j.Priority != nil:
			prio = strconv.Itoa(int(j.GetPriority()))
		case prio == "":
			prio = "0"
		}
		minAvail := int32(1)
		if j.MinAvailable != nil {
			minAvail = j.GetMinAvailable()
		}
		full := fullName(j.GetNamespace(), j.GetName())
		t.row(full, queue, scenario.PhaseName(j.GetPhase()), strconv.Itoa(int(minAvail)), prio, strconv.Itoa(count[full]))
	}
	return t.flush()
}

func (a *app) taskTable(tasks []*sluicev1.Task) error {
	t := newTable(a.stdout, "NAME", "JOB", "STATUS", "NODE", "RESOURCES")
	for _, tk := range tasks {
		status := "Pending"
		if tk.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_UNSPECIFIED {
			status = enumName(tk.GetStatus().String(), "TASK_STATUS_")
		}
		t.row(fullName(tk.GetNamespace(), tk.GetName()), fullName(tk.GetNamespace(), tk.GetJob()),
			status, tk.GetNode(), fmtResources(tk.GetResources()))
	}
	return t.flush()
}

// fullName returns "namespace/name", with "default" for an empty namespace.
func fullName(ns, name string) string {
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + name
}
