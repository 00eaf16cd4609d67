package extender

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

func TestNew(t *testing.T) {
	const u = "http://127.0.0.1:8080"
	tests := []struct {
		name    string
		args    conf.Arguments
		wantErr string
		check   func(t *testing.T, c *config)
	}{
		{name: "no arguments", args: nil, check: func(t *testing.T, c *config) {
			if c.timeout != DefaultHTTPTimeout || c.ignorable || c.predicate != "" {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "every verb", args: conf.Arguments{
			ArgURLPrefix: u, ArgHTTPTimeout: "100ms", ArgIgnorable: true,
			ArgOnSessionOpenVerb: "open", ArgOnSessionCloseVerb: "close", ArgPredicateVerb: "/predicate",
			ArgPrioritizeVerb: "prioritize", ArgPreemptableVerb: "preemptable", ArgReclaimableVerb: "reclaimable",
			ArgQueueOverusedVerb: "overused", ArgJobEnqueueableVerb: "enqueueable", ArgJobReadyVerb: "ready",
			ArgAllocateFunc: "alloc", ArgDeallocateFunc: "dealloc", ArgManagedResources: []any{"nvidia.com/gpu", " rdma "},
		}, check: func(t *testing.T, c *config) {
			got := []string{c.onSessionOpen, c.onSessionClose, c.predicate, c.prioritize, c.preemptable, c.reclaimable,
				c.queueOverused, c.jobEnqueueable, c.jobReady, c.allocate, c.deallocate}
			want := []string{"open", "close", "predicate", "prioritize", "preemptable", "reclaimable", "overused", "enqueueable", "ready", "alloc", "dealloc"}
			if !reflect.DeepEqual(got, want) || c.timeout != 100*time.Millisecond || !c.ignorable ||
				!reflect.DeepEqual(c.managed, []string{"nvidia.com/gpu", "rdma"}) {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "documentation aliases", args: conf.Arguments{ArgURLPrefix: u, ArgAllocateFuncVerb: "a", ArgDeallocateFuncVerb: "d"},
			check: func(t *testing.T, c *config) {
				if c.allocate != "a" || c.deallocate != "d" {
					t.Errorf("allocate, deallocate = %q, %q", c.allocate, c.deallocate)
				}
			}},
		{name: "alias agreeing", args: conf.Arguments{ArgURLPrefix: u, ArgAllocateFunc: "a", ArgAllocateFuncVerb: "a"}},
		{name: "managed resources as a string", args: conf.Arguments{ArgManagedResources: "nvidia.com/gpu, ,cpu"},
			check: func(t *testing.T, c *config) {
				if !reflect.DeepEqual(c.managed, []string{"nvidia.com/gpu", "cpu"}) {
					t.Errorf("managed = %q", c.managed)
				}
			}},
		{name: "alias disagreeing", args: conf.Arguments{ArgURLPrefix: u, ArgAllocateFunc: "a", ArgAllocateFuncVerb: "b"}, wantErr: ArgAllocateFuncVerb},
		{name: "verb without url", args: conf.Arguments{ArgPredicateVerb: "predicate"}, wantErr: ArgURLPrefix},
		{name: "url without scheme", args: conf.Arguments{ArgURLPrefix: "127.0.0.1:80", ArgPredicateVerb: "p"}, wantErr: ArgURLPrefix},
		{name: "bad timeout", args: conf.Arguments{ArgHTTPTimeout: "soon"}, wantErr: ArgHTTPTimeout},
		{name: "bare number timeout", args: conf.Arguments{ArgHTTPTimeout: 100}, wantErr: ArgHTTPTimeout},
		{name: "zero timeout", args: conf.Arguments{ArgHTTPTimeout: "0s"}, wantErr: ArgHTTPTimeout},
		{name: "bad ignorable", args: conf.Arguments{ArgIgnorable: "perhaps"}, wantErr: ArgIgnorable},
		{name: "bad managed resources", args: conf.Arguments{ArgManagedResources: []any{1}}, wantErr: ArgManagedResources},
		{name: "managed resources mapping", args: conf.Arguments{ArgManagedResources: map[string]any{"a": 1}}, wantErr: ArgManagedResources},
		{name: "verb with a space", args: conf.Arguments{ArgURLPrefix: u, ArgJobReadyVerb: "job ready"}, wantErr: ArgJobReadyVerb},
		{name: "verb not a string", args: conf.Arguments{ArgURLPrefix: u, ArgPredicateVerb: []any{"p"}}, wantErr: ArgPredicateVerb},
		{name: "misspelt argument", args: conf.Arguments{ArgURLPrefix: u, "extender.predicatVerb": "p"}, wantErr: "extender.predicatVerb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New() error = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if p.Name() != Name {
				t.Errorf("Name() = %q", p.Name())
			}
			if tc.check != nil {
				tc.check(t, p.(*plugin).cfg)
			}
		})
	}
}

func TestPredicate(t *testing.T) {
	tests := []struct {
		name      string
		answer    func(map[string]any) reply
		more      []string
		wantErr   string // "" means fits
		wantCode  api.FitCode
		wantCalls int
	}{
		{name: "accepted", answer: ok(`{"errorMessage":""}`), wantCalls: 1},
		{name: "empty body accepts", answer: ok(`{}`), wantCalls: 1},
		{name: "unschedulable", answer: ok(`{"errorMessage":"rack full","code":2}`), wantErr: "rack full", wantCode: api.Unschedulable, wantCalls: 1},
		{name: "unresolvable", answer: ok(`{"errorMessage":"wrong rack","code":3}`), wantErr: "wrong rack", wantCode: api.UnschedulableAndUnresolvable, wantCalls: 1},
		{name: "message without code is an error", answer: ok(`{"errorMessage":"no"}`), wantErr: "no", wantCode: api.InternalError, wantCalls: 1},
		{name: "HTTP failure", answer: failing(http.StatusInternalServerError), wantErr: "extender predicate failed: predicate: extender at", wantCode: api.InternalError, wantCalls: 1},
		{name: "HTTP failure, ignorable", answer: failing(http.StatusInternalServerError), more: []string{"extender.ignorable: true"}, wantCalls: 1},
		{name: "undecodable body", answer: ok(`not json`), wantErr: "decode response", wantCode: api.InternalError, wantCalls: 1},
		{name: "undecodable body, ignorable", answer: ok(`not json`), more: []string{"extender.ignorable: true"}, wantCalls: 1},
		{name: "timeout", answer: slow(time.Second, `{}`), more: []string{"extender.httpTimeout: 30ms"}, wantErr: "Timeout", wantCode: api.InternalError, wantCalls: 1},
		{name: "timeout, ignorable", answer: slow(time.Second, `{"errorMessage":"late","code":2}`), more: []string{"extender.httpTimeout: 30ms", "extender.ignorable: true"}, wantCalls: 1},
		{name: "task not requesting a managed resource", answer: ok(`{"errorMessage":"no","code":2}`), more: []string{"extender.managedResources: [rdma/hca]"}},
		{name: "task requesting a managed resource", answer: ok(`{"errorMessage":"no","code":2}`), more: []string{"extender.managedResources: [rdma/hca, example.com/fpga]"},
			wantErr: "no", wantCode: api.Unschedulable, wantCalls: 1},
		{name: "task requesting a managed device", answer: ok(`{"errorMessage":"no","code":2}`), more: []string{"extender.managedResources: nvidia.com/gpu"},
			wantErr: "no", wantCode: api.Unschedulable, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]func(map[string]any) reply{"predicate": tc.answer})
			c := newCluster()
			task := c.task(c.job("j", 0), "t", api.Pending, "", map[string]float64{"example.com/fpga": 1})
			task.Devices = []api.DeviceRequest{{Type: api.ResourceGPU, Count: 1}}
			task.Labels = map[string]string{"app": "x"}
			ssn, _ := c.open(t, cfgYAML("allocate", f.args(append([]string{"extender.predicateVerb: predicate"}, tc.more...)...)...))
			start := time.Now()
			err := ssn.PredicateFn(taskOf(t, ssn, "j", "t"), ssn.Nodes["b"])
			if time.Since(start) > 900*time.Millisecond {
				t.Errorf("call took %v, the timeout did not apply", time.Since(start))
			}
			if n := f.count("predicate"); n != tc.wantCalls {
				t.Fatalf("predicate called %d times, want %d", n, tc.wantCalls)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("predicate = %v, want fit", err)
				}
			} else {
				fe, isFit := err.(*api.FitError)
				if !isFit || fe.Node != "b" || fe.Code != tc.wantCode || len(fe.Reasons) != 1 || !strings.Contains(fe.Reasons[0], tc.wantErr) {
					t.Fatalf("predicate = %#v, want code %d with %q", err, tc.wantCode, tc.wantErr)
				}
			}
			if tc.wantCalls > 0 {
				b := f.last("predicate")
				if field(b, "task", "uid") != "ns/t" || field(b, "node", "name") != "b" ||
					field(b, "task", "resources", "example.com/fpga") != 1.0 || field(b, "task", "resources", "cpu") != 1.0 ||
					field(b, "task", "labels", "app") != "x" || field(b, "node", "labels", "zone") != "z-b" ||
					field(b, "task", "status") != "Pending" || field(b, "node", "allocatable", "memory") != 32*gib {
					t.Errorf("predicate request = %v", b)
				}
				devs, _ := field(b, "task", "devices").([]any)
				if len(devs) != 1 || field(devs[0].(map[string]any), "type") != api.ResourceGPU {
					t.Errorf("task devices = %v", field(b, "task", "devices"))
				}
			}
		})
	}
}

func TestPrioritize(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(map[string]any) reply
		more    []string
		want    map[string]float64
		wantErr bool
	}{
		{name: "scores", answer: ok(`{"nodeScore":{"a":1,"c":30,"elsewhere":99}}`), want: map[string]float64{"a": 1, "b": 0, "c": 30}},
		{name: "no scores", answer: ok(`{}`), want: map[string]float64{"a": 0, "b": 0, "c": 0}},
		{name: "error message", answer: ok(`{"errorMessage":"busy"}`), more: []string{"extender.ignorable: true"}, wantErr: true},
		{name: "HTTP failure", answer: failing(http.StatusBadGateway), wantErr: true},
		{name: "HTTP failure, ignorable", answer: failing(http.StatusBadGateway), more: []string{"extender.ignorable: true"}, want: map[string]float64{"a": 0, "b": 0, "c": 0}},
		{name: "timeout", answer: slow(time.Second, `{"nodeScore":{"a":1}}`), more: []string{"extender.httpTimeout: 30ms"}, wantErr: true},
		{name: "timeout, ignorable", answer: slow(time.Second, `{"nodeScore":{"a":1}}`), more: []string{"extender.httpTimeout: 30ms", "extender.ignorable: true"}, want: map[string]float64{"a": 0, "b": 0, "c": 0}},
		{name: "task not requesting a managed resource", answer: ok(`{"nodeScore":{"a":1}}`), more: []string{"extender.managedResources: nvidia.com/gpu"}, want: map[string]float64{"a": 0, "b": 0, "c": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]func(map[string]any) reply{"prioritize": tc.answer})
			c := newCluster()
			c.task(c.job("j", 0), "t", api.Pending, "", nil)
			ssn, _ := c.open(t, cfgYAML("allocate", f.args(append([]string{"extender.prioritizeVerb: prioritize"}, tc.more...)...)...))
			got, err := ssn.BatchNodeOrderFn(taskOf(t, ssn, "j", "t"), ssn.NodeList)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("BatchNodeOrderFn = %v, want an error", got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("BatchNodeOrderFn = %v, %v; want %v", got, err, tc.want)
			}
			if tc.name == "scores" {
				nodes, _ := field(f.last("prioritize"), "nodes").([]any)
				if len(nodes) != 3 || field(nodes[2].(map[string]any), "name") != "c" {
					t.Errorf("prioritize nodes = %v", nodes)
				}
			}
		})
	}
}

// TestEvictable covers preemptable and reclaimable: victims come back in evictee order, named
// by uid or by namespace and name.
func TestEvictable(t *testing.T) {
	tests := []struct {
		name        string
		answer      func(map[string]any) reply
		ignorable   bool
		wantVictims []string
		wantVote    framework.Vote
	}{
		{name: "permit with victims", answer: ok(`{"status":1,"victims":[{"uid":"ns/v2"},{"namespace":"ns","name":"v0"},{"uid":"ns/stranger"}]}`),
			wantVictims: []string{"v0", "v2"}, wantVote: framework.Permit},
		{name: "abstain", answer: ok(`{"status":0}`), wantVote: framework.Abstain},
		{name: "reject", answer: ok(`{"status":-1}`), wantVote: framework.Reject},
		{name: "failure rejects", answer: failing(http.StatusServiceUnavailable), wantVote: framework.Reject},
		{name: "failure, ignorable, abstains", answer: failing(http.StatusServiceUnavailable), ignorable: true, wantVote: framework.Abstain},
		{name: "timeout rejects", answer: slow(time.Second, `{"status":1}`), wantVote: framework.Reject},
	}
	for _, verb := range []string{"preemptable", "reclaimable"} {
		for _, tc := range tests {
			t.Run(verb+"/"+tc.name, func(t *testing.T) {
				f := newFake(t, map[string]func(map[string]any) reply{verb: tc.answer})
				c := newCluster()
				low := c.job("low", 0)
				for _, n := range []string{"v0", "v1", "v2"} {
					c.task(low, n, api.Running, "a", nil)
				}
				c.task(c.job("high", 10), "p", api.Pending, "", nil)
				more := []string{"extender." + verb + "Verb: " + verb, "extender.httpTimeout: 30ms"}
				if tc.ignorable {
					more = append(more, "extender.ignorable: true")
				}
				ssn, _ := c.open(t, cfgYAML("preempt", f.args(more...)...))
				var evictees []*api.TaskInfo
				for _, n := range []string{"v0", "v1", "v2"} {
					evictees = append(evictees, taskOf(t, ssn, "low", n))
				}
				p := taskOf(t, ssn, "high", "p")
				fn := extenderOf(t, ssn).evictableFn(verb)
				victims, v := fn(p, evictees)
				if got := names(victims); strings.Join(got, ",") != strings.Join(tc.wantVictims, ",") || v != tc.wantVote {
					t.Errorf("%s = %v, %d; want %v, %d", verb, got, v, tc.wantVictims, tc.wantVote)
				}
				// Through the session's dispatch.
				var dispatched []*api.TaskInfo
				if verb == "preemptable" {
					dispatched = ssn.Preemptable(p, evictees)
				} else {
					dispatched = ssn.Reclaimable(p, evictees)
				}
				if got := names(dispatched); len(got) != len(tc.wantVictims) {
					t.Errorf("session %s = %v, want %v", verb, got, tc.wantVictims)
				}
				b := f.last(verb)
				if field(b, "evictor", "uid") != "ns/p" || len(field(b, "evictees").([]any)) != 3 {
					t.Errorf("%s request = %v", verb, b)
				}
			})
		}
	}
}

func TestJobEnqueueable(t *testing.T) {
	tests := []struct {
		name      string
		answer    func(map[string]any) reply
		ignorable bool
		wantVote  framework.Vote
		want      bool
	}{
		{name: "permit", answer: ok(`{"status":1}`), wantVote: framework.Permit, want: true},
		{name: "abstain", answer: ok(`{"status":0}`), wantVote: framework.Abstain, want: true},
		{name: "reject", answer: ok(`{"status":-1}`), wantVote: framework.Reject, want: false},
		{name: "failure rejects", answer: failing(http.StatusNotFound), wantVote: framework.Reject, want: false},
		{name: "failure, ignorable, abstains", answer: failing(http.StatusNotFound), ignorable: true, wantVote: framework.Abstain, want: true},
		{name: "timeout, ignorable, abstains", answer: slow(time.Second, `{"status":-1}`), ignorable: true, wantVote: framework.Abstain, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]func(map[string]any) reply{"enqueueable": tc.answer})
			c := newCluster()
			j := c.job("j", 5)
			j.Phase = api.JobPending
			c.task(j, "t", api.Pending, "", nil)
			more := []string{"extender.jobEnqueueableVerb: enqueueable", "extender.httpTimeout: 30ms"}
			if tc.ignorable {
				more = append(more, "extender.ignorable: true")
			}
			ssn, _ := c.open(t, cfgYAML("enqueue", f.args(more...)...))
			job := ssn.Jobs[ns+"/j"]
			if got := extenderOf(t, ssn).jobEnqueueableFn(job); got != tc.wantVote {
				t.Errorf("vote = %d, want %d", got, tc.wantVote)
			}
			if got := ssn.JobEnqueueable(job); got != tc.want {
				t.Errorf("JobEnqueueable = %t, want %t", got, tc.want)
			}
			b := f.last("enqueueable")
			tasks, _ := field(b, "job", "tasks").([]any)
			if field(b, "job", "uid") != "ns/j" || field(b, "job", "priority") != 5.0 || field(b, "job", "phase") != "Pending" ||
				len(tasks) != 1 || field(tasks[0].(map[string]any), "uid") != "ns/t" {
				t.Errorf("jobEnqueueable request = %v", b)
			}
		})
	}
}

func TestQueueOverusedAndJobReady(t *testing.T) {
	tests := []struct {
		name         string
		overused     func(map[string]any) reply
		ready        func(map[string]any) reply
		ignorable    bool
		wantOverused bool
		wantReady    bool
	}{
		{name: "answers", overused: ok(`{"overused":true}`), ready: ok(`{"status":false}`), wantOverused: true, wantReady: false},
		{name: "other answers", overused: ok(`{"overused":false}`), ready: ok(`{"status":true}`), wantOverused: false, wantReady: true},
		{name: "failures", overused: failing(http.StatusInternalServerError), ready: failing(http.StatusInternalServerError), wantOverused: true, wantReady: false},
		{name: "failures, ignorable", overused: failing(http.StatusInternalServerError), ready: failing(http.StatusInternalServerError), ignorable: true, wantOverused: false, wantReady: true},
		{name: "timeouts", overused: slow(time.Second, `{"overused":false}`), ready: slow(time.Second, `{"status":true}`), wantOverused: true, wantReady: false},
		{name: "timeouts, ignorable", overused: slow(time.Second, `{"overused":true}`), ready: slow(time.Second, `{"status":false}`), ignorable: true, wantOverused: false, wantReady: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]func(map[string]any) reply{"overused": tc.overused, "ready": tc.ready})
			c := newCluster()
			c.task(c.job("j", 0), "t", api.Pending, "", nil)
			more := []string{"extender.queueOverusedVerb: overused", "extender.jobReadyVerb: ready", "extender.httpTimeout: 30ms"}
			if tc.ignorable {
				more = append(more, "extender.ignorable: true")
			}
			ssn, _ := c.open(t, cfgYAML("allocate", f.args(more...)...))
			if got := ssn.Overused(ssn.Queues["q"]); got != tc.wantOverused {
				t.Errorf("Overused = %t, want %t", got, tc.wantOverused)
			}
			if got := ssn.JobReady(ssn.Jobs[ns+"/j"]); got != tc.wantReady {
				t.Errorf("JobReady = %t, want %t", got, tc.wantReady)
			}
			if b := f.last("overused"); field(b, "queue", "name") != "q" || field(b, "queue", "weight") != 1.0 {
				t.Errorf("queueOverused request = %v", b)
			}
			if b := f.last("ready"); field(b, "job", "uid") != "ns/j" {
				t.Errorf("jobReady request = %v", b)
			}
		})
	}
}

// TestEvents checks the allocate and deallocate notifications of a statement.
func TestEvents(t *testing.T) {
	f := newFake(t, map[string]func(map[string]any) reply{"dealloc": failing(http.StatusInternalServerError)})
	c := newCluster()
	c.task(c.job("j", 0), "t", api.Pending, "", nil)
	ssn, _ := c.open(t, cfgYAML("allocate", f.args("extender.allocateFunc: alloc", "extender.deallocateFuncVerb: dealloc")...))
	st := ssn.NewStatement()
	if err := st.Allocate(taskOf(t, ssn, "j", "t"), ssn.Nodes["c"]); err != nil {
		t.Fatal(err)
	}
	b := f.last("alloc")
	if field(b, "task", "uid") != "ns/t" || field(b, "task", "node") != "c" || field(b, "task", "status") != "Allocated" {
		t.Errorf("allocate notification = %v", b)
	}
	st.Discard() // a failing deallocate notification is only logged
	if b := f.last("dealloc"); field(b, "task", "uid") != "ns/t" || field(b, "task", "status") != "Pending" {
		t.Errorf("deallocate notification = %v", b)
	}
	if got := f.verbs(); !reflect.DeepEqual(got, []string{"alloc", "dealloc"}) {
		t.Errorf("calls = %v", got)
	}
}

// TestSession checks onSessionOpen's body, onSessionClose, and what a failing onSessionOpen
// does to the cycle's callbacks.
func TestSession(t *testing.T) {
	tests := []struct {
		name           string
		open           func(map[string]any) reply
		ignorable      bool
		wantPredicates bool
	}{
		{name: "open succeeds", open: ok(`{}`), wantPredicates: true},
		{name: "open fails", open: failing(http.StatusInternalServerError), wantPredicates: false},
		{name: "open times out", open: slow(time.Second, `{}`), wantPredicates: false},
		{name: "open fails, ignorable", open: failing(http.StatusInternalServerError), ignorable: true, wantPredicates: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]func(map[string]any) reply{"open": tc.open, "close": failing(http.StatusInternalServerError)})
			c := newCluster()
			j := c.job("j", 0)
			c.task(j, "r", api.Running, "a", nil).DeviceIDs = []string{"g0"}
			c.task(j, "t", api.Pending, "", nil)
			more := []string{"extender.onSessionOpenVerb: open", "extender.onSessionCloseVerb: close",
				"extender.predicateVerb: predicate", "extender.httpTimeout: 30ms"}
			if tc.ignorable {
				more = append(more, "extender.ignorable: true")
			}
			ssn, _ := c.open(t, cfgYAML("allocate", f.args(more...)...))
			if ssn.HasPredicates() != tc.wantPredicates {
				t.Errorf("HasPredicates = %t, want %t", ssn.HasPredicates(), tc.wantPredicates)
			}
			b := f.last("open")
			jobs, _ := b["jobs"].([]any)
			nodes, _ := b["nodes"].([]any)
			queues, _ := b["queues"].([]any)
			if b["cluster"] != "test" || b["revision"] != 7.0 || len(jobs) != 1 || len(nodes) != 3 || len(queues) != 1 {
				t.Fatalf("onSessionOpen request = %v", b)
			}
			a := nodes[0].(map[string]any)
			if a["name"] != "a" || !reflect.DeepEqual(a["tasks"], []any{"ns/r"}) || field(a, "used", "cpu") != 1.0 {
				t.Errorf("node a = %v", a)
			}
			ssn.Close() // a failing onSessionClose is only logged
			if f.count("close") != 1 || f.last("close")["jobs"] != nil {
				t.Errorf("onSessionClose calls = %d, last %v", f.count("close"), f.last("close"))
			}
		})
	}
}

// TestAllocateEndToEnd runs allocate with the extender filtering and scoring: node a is
// rejected, c scores best, so the task binds to c.
func TestAllocateEndToEnd(t *testing.T) {
	f := newFake(t, map[string]func(map[string]any) reply{
		"predicate": func(b map[string]any) reply {
			if field(b, "node", "name") == "a" {
				return reply{body: `{"errorMessage":"a is reserved","code":3}`}
			}
			return reply{body: `{}`}
		},
		"prioritize": ok(`{"nodeScore":{"a":100,"b":10,"c":50}}`),
	})
	c := newCluster()
	c.task(c.job("j", 0), "t", api.Pending, "", nil)
	c.task(c.job("k", 0), "u", api.Pending, "", map[string]float64{api.ResourceCPU: 100})
	ssn, reg := c.open(t, cfgYAML("allocate", f.args("extender.predicateVerb: predicate", "extender.prioritizeVerb: prioritize")...))
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	res := ssn.Close()
	var binds []string
	for _, d := range res.Decisions {
		binds = append(binds, d.Kind.String()+" "+d.Task+" "+d.Node)
	}
	if !reflect.DeepEqual(binds, []string{"bind ns/t c"}) {
		t.Errorf("decisions = %v, want t bound to c", binds)
	}
	for _, o := range res.Jobs {
		if o.Job == ns+"/k" && (o.Explanation == nil || !strings.Contains(o.Explanation.Summary, "insufficient cpu")) {
			t.Errorf("k explanation = %+v", o.Explanation)
		}
	}
}

// TestResponseLimit: a response body over 10 MiB is a failed call.
func TestResponseLimit(t *testing.T) {
	huge := `{"errorMessage":"` + strings.Repeat("x", maxBodySize) + `"}`
	f := newFake(t, map[string]func(map[string]any) reply{"predicate": ok(huge)})
	c := newCluster()
	c.task(c.job("j", 0), "t", api.Pending, "", nil)
	ssn, _ := c.open(t, cfgYAML("allocate", f.args("extender.predicateVerb: predicate")...))
	err := ssn.PredicateFn(taskOf(t, ssn, "j", "t"), ssn.Nodes["a"])
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("predicate = %v, want a failed call for the body size", err)
	}
}
