package extender

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

const (
	ns  = "ns"
	gib = float64(1 << 30)
)

// reply is how the fake extender answers one call: an HTTP status (0: 200), a JSON body, and
// a delay before answering.
type reply struct {
	status int
	body   string
	delay  time.Duration
}

// call is one request the fake extender received.
type call struct {
	verb string
	body map[string]any
}

// fakeExtender is an HTTP server answering each verb with a function of the request body.
type fakeExtender struct {
	srv     *httptest.Server
	mu      sync.Mutex
	calls   []call
	answers map[string]func(body map[string]any) reply
}

func newFake(t *testing.T, answers map[string]func(body map[string]any) reply) *fakeExtender {
	t.Helper()
	f := &fakeExtender{answers: answers}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb := strings.TrimPrefix(r.URL.Path, "/")
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil || r.Method != http.MethodPost ||
			r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.calls = append(f.calls, call{verb: verb, body: body})
		answer := f.answers[verb]
		f.mu.Unlock()
		rep := reply{body: "{}"}
		if answer != nil {
			rep = answer(body)
		}
		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// verbs returns the verbs called so far, in order.
func (f *fakeExtender) verbs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.calls))
	for _, c := range f.calls {
		out = append(out, c.verb)
	}
	return out
}

// last returns the body of the last call of verb, or nil.
func (f *fakeExtender) last(verb string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].verb == verb {
			return f.calls[i].body
		}
	}
	return nil
}

func (f *fakeExtender) count(verb string) int {
	n := 0
	for _, v := range f.verbs() {
		if v == verb {
			n++
		}
	}
	return n
}

func ok(body string) func(map[string]any) reply {
	return func(map[string]any) reply { return reply{body: body} }
}

func failing(status int) func(map[string]any) reply {
	return func(map[string]any) reply { return reply{status: status, body: `{"error":"boom"}`} }
}

func slow(d time.Duration, body string) func(map[string]any) reply {
	return func(map[string]any) reply { return reply{delay: d, body: body} }
}

// field digs into a decoded JSON body: field(b, "task", "uid").
func field(body map[string]any, path ...string) any {
	var cur any = body
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// cluster is a snapshot under construction: nodes a, b, c with 8 cpu; queue q.
type cluster struct{ snap framework.Snapshot }

func newCluster() *cluster {
	c := &cluster{snap: framework.Snapshot{Cluster: "test", Revision: 7}}
	c.snap.Queues = append(c.snap.Queues, &api.Queue{Name: "q", Weight: 1, State: api.QueueOpen, Reclaimable: true})
	for _, n := range []string{"a", "b", "c"} {
		c.snap.Nodes = append(c.snap.Nodes, &api.Node{Name: n, Labels: map[string]string{"zone": "z-" + n},
			Allocatable: *api.NewResource(map[string]float64{api.ResourceCPU: 8, api.ResourceMemory: 32 * gib}),
			Devices:     []api.Device{{ID: "g0", Type: api.ResourceGPU, Model: "H100", Memory: 80 * gib}}})
	}
	return c
}

func (c *cluster) job(name string, prio int32) *api.Job {
	j := &api.Job{Name: name, Namespace: ns, Queue: "q", MinAvailable: 1, Phase: api.JobInqueue,
		Priority: prio, HasPriority: true, CreatedAt: api.Epoch.Add(time.Duration(len(c.snap.Jobs)) * time.Second)}
	c.snap.Jobs = append(c.snap.Jobs, j)
	return j
}

// task adds a task asking for 1 cpu (plus res) in the given status on node.
func (c *cluster) task(j *api.Job, name string, status api.TaskStatus, node string, res map[string]float64) *api.Task {
	amounts := map[string]float64{api.ResourceCPU: 1, api.ResourceMemory: gib}
	for k, v := range res {
		amounts[k] = v
	}
	t := &api.Task{Name: name, Namespace: ns, Job: j.Name, Role: "worker", Status: status, Node: node,
		Resources: *api.NewResource(amounts), Preemptable: true}
	c.snap.Tasks = append(c.snap.Tasks, t)
	return t
}

// config is a one-tier configuration with the extender and the given arguments ("k: v").
func cfgYAML(actions string, args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "actions: %q\ntiers:\n- plugins:\n  - name: %s\n", actions, Name)
	if len(args) > 0 {
		b.WriteString("    arguments:\n")
		for _, a := range args {
			b.WriteString("      " + a + "\n")
		}
	}
	return b.String()
}

// args returns the extender arguments pointing at the fake, with more lines appended and a
// 2s timeout unless they set one.
func (f *fakeExtender) args(more ...string) []string {
	out := []string{"extender.urlPrefix: " + f.srv.URL + "/"}
	timeout := true
	for _, m := range more {
		timeout = timeout && !strings.HasPrefix(m, "extender.httpTimeout:")
	}
	if timeout {
		out = append(out, "extender.httpTimeout: 2s")
	}
	return append(out, more...)
}

func (c *cluster) open(t *testing.T, cfgText string) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(cfgText))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	actions.Register(reg)
	ssn, err := framework.OpenSession(&c.snap, cfg, reg, framework.Options{Now: api.Epoch})
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	return ssn, reg
}

func taskOf(t *testing.T, ssn *framework.Session, job, name string) *api.TaskInfo {
	t.Helper()
	ti := ssn.Jobs[ns+"/"+job].Tasks[ns+"/"+name]
	if ti == nil {
		t.Fatalf("task %s/%s not in session", job, name)
	}
	return ti
}

// extenderOf returns the session's extender plugin.
func extenderOf(t *testing.T, ssn *framework.Session) *plugin {
	t.Helper()
	for _, p := range ssn.Plugins() {
		if ep, ok := p.(*plugin); ok {
			return ep
		}
	}
	t.Fatal("no extender in session")
	return nil
}

func names(ts []*api.TaskInfo) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}
