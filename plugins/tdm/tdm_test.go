package tdm

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

// noon is 12:00 UTC on the test epoch's day.
var noon = api.Epoch.Add(12 * time.Hour)

// config returns a one-tier configuration of the given actions with tdm and its arguments.
func config(acts string, args map[string]string) string {
	s := "actions: \"" + acts + "\"\ntiers:\n- plugins:\n  - name: tdm\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s += fmt.Sprintf("      %s: %q\n", k, args[k])
		}
	}
	return s
}

func registry() *framework.Registry {
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	actions.Register(reg)
	return reg
}

// open opens a session with tdm only, at now, remembering across sessions in mem (nil: fresh).
func open(t *testing.T, c *tu.Cluster, acts string, args map[string]string, now time.Time, mem *framework.Memory) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(config(acts, args)))
	if err != nil {
		t.Fatal(err)
	}
	reg := registry()
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: now, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	return ssn, reg
}

// zones are the windows of Volcano's Test_TDM: rz1 always active, rz2 only 0:00-0:01.
var zones = map[string]string{"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.revocable-zone.rz2": "0:00-0:01"}

// zoneNode adds a node of 16 cpus and 64Gi in zone ("" for none).
func zoneNode(c *tu.Cluster, name, zone string) {
	n := c.Node(name, tu.CPU(16, 64))
	if zone != "" {
		n.Labels = map[string]string{RevocableZone: zone}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		args    conf.Arguments
		zones   []string
		period  time.Duration
		wantErr string
	}{
		{"no arguments", nil, nil, time.Minute, ""},
		{"zones and period", conf.Arguments{"tdm.revocable-zone.rz1": "10:00-21:00", "tdm.revocable-zone.rz2": " 1:00-0:00 ", ArgEvictPeriod: "100ms"}, []string{"rz1", "rz2"}, 100 * time.Millisecond, ""},
		{"key containing the prefix", conf.Arguments{"x.tdm.revocable-zone.a": "1:00-2:00"}, []string{"x.a"}, time.Minute, ""},
		{"unrelated arguments are ignored", conf.Arguments{"tdm.evict.max-num": 3}, nil, time.Minute, ""},
		{"zero period", conf.Arguments{ArgEvictPeriod: "0s"}, nil, 0, ""},
		{"window without a dash", conf.Arguments{"tdm.revocable-zone.rz1": "00:00_01:00"}, nil, 0, `"tdm.revocable-zone.rz1"`},
		{"one-digit minutes", conf.Arguments{"tdm.revocable-zone.rz1": "1:0-0:0"}, nil, 0, `"tdm.revocable-zone.rz1"`},
		{"hour out of range", conf.Arguments{"tdm.revocable-zone.rz1": "63:59-23:59"}, nil, 0, `"tdm.revocable-zone.rz1"`},
		{"window not a string", conf.Arguments{"tdm.revocable-zone.rz1": []any{"1:00"}}, nil, 0, `"tdm.revocable-zone.rz1"`},
		{"bad period", conf.Arguments{ArgEvictPeriod: "soon"}, nil, 0, `"tdm.evict.period"`},
		{"negative period", conf.Arguments{ArgEvictPeriod: "-1m"}, nil, 0, `"tdm.evict.period"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := got.(*plugin)
			if !slices.Equal(p.zoneNames, tc.zones) || p.evictPeriod != tc.period {
				t.Errorf("zones %v period %v, want %v %v", p.zoneNames, p.evictPeriod, tc.zones, tc.period)
			}
		})
	}
}

// TestWindowBounds ports Volcano's Test_parseRevocableZone: the length of the window checked.
func TestWindowBounds(t *testing.T) {
	tests := []struct {
		raw   string
		delta time.Duration
		err   bool
	}{
		{"00:00_01:00", 0, true},
		{"00:00-01:00", time.Hour, false},
		{"0:00-23:59", 23*time.Hour + 59*time.Minute, false},
		{"0:00", 0, true},
		{"1:00-0:00", 23 * time.Hour, false},
		{"1:0-0:0", 0, true},
		{"   1:00-0:00    ", 23 * time.Hour, false},
		{"23:59-23:59", 24 * time.Hour, false},
		{"63:59-23:59", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			w, err := parseWindow(tc.raw)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err != nil {
				return
			}
			start, end := w.bounds(noon)
			if d := end.Sub(start); d != tc.delta {
				t.Errorf("window lasts %v, want %v", d, tc.delta)
			}
		})
	}
}

func TestWindowActive(t *testing.T) {
	at := func(h, m, s int) time.Time { return api.Epoch.Add(time.Duration(h*3600+m*60+s) * time.Second) }
	tests := []struct {
		raw  string
		now  time.Time
		want bool
	}{
		{"0:00-0:00", at(0, 0, 0), true},
		{"0:00-0:00", at(12, 0, 0), true},
		{"0:00-0:00", at(23, 59, 59), true},
		{"0:00-0:01", at(0, 0, 30), true},
		{"0:00-0:01", at(0, 1, 0), true}, // the end is included
		{"0:00-0:01", at(0, 1, 1), false},
		{"0:00-0:01", at(12, 0, 0), false},
		{"10:00-21:00", at(9, 59, 59), false},
		{"10:00-21:00", at(10, 0, 0), true},
		{"10:00-21:00", at(21, 0, 0), true},
		{"10:00-21:00", api.Epoch.Add(21*time.Hour + 500*time.Millisecond), true}, // to the second
		{"10:00-21:00", at(21, 0, 1), false},
		{"22:00-6:00", at(23, 0, 0), true},
		// As Volcano: the window checked at 3:00 starts at 22:00 that day.
		{"22:00-6:00", at(3, 0, 0), false},
		// Read in the clock's time zone: 12:00 UTC is 21:00 in UTC+9.
		{"20:00-22:00", at(12, 0, 0).In(time.FixedZone("UTC+9", 9*3600)), true},
		{"20:00-22:00", at(12, 0, 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.raw+"@"+tc.now.Format("15:04:05.000Z07:00"), func(t *testing.T) {
			w, err := parseWindow(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.active(tc.now); got != tc.want {
				t.Errorf("active = %v, want %v", got, tc.want)
			}
		})
	}
}

// tdmCluster is Volcano's Test_TDM cluster: n1, n2 in rz1, n3, n4 in no zone, n5 in rz2, n6 in
// rz3 (not configured), and one pending task of job pg1 with the given annotations.
func tdmCluster(ann map[string]string) *tu.Cluster {
	c := tu.NewCluster()
	for _, n := range []struct{ name, zone string }{{"n1", "rz1"}, {"n2", "rz1"}, {"n3", ""}, {"n4", ""}, {"n5", "rz2"}, {"n6", "rz3"}} {
		zoneNode(c, n.name, n.zone)
	}
	c.Queue("c1", 1)
	j := c.Job("pg1", "c1", 1)
	c.Task(j, "p", api.Pending, "", tu.CPU(1, 1)).Annotations = ann
	return c
}

func TestPredicateAndNodeOrder(t *testing.T) {
	tests := []struct {
		name string
		ann  map[string]string
		now  time.Time
		// fit maps the nodes that fit to their score.
		fit map[string]float64
	}{
		// Volcano's Test_TDM: "preemptable task rz available", "preemptable task and multiple rz".
		{"revocable task", map[string]string{RevocableZone: "*"}, noon, map[string]float64{"n1": 100, "n2": 100, "n3": 0, "n4": 0}},
		// Volcano's Test_TDM: "not preemptable task".
		{"plain task", nil, noon, map[string]float64{"n3": 0, "n4": 0}},
		{"revocable zone other than *", map[string]string{RevocableZone: "rz1"}, noon, map[string]float64{"n3": 0, "n4": 0}},
		{"preemptable annotation", map[string]string{Preemptable: "true"}, noon, map[string]float64{"n1": 100, "n2": 100, "n3": 0, "n4": 0}},
		{"preemptable annotation false", map[string]string{Preemptable: "false"}, noon, map[string]float64{"n3": 0, "n4": 0}},
		{"revocable-zone annotation wins", map[string]string{RevocableZone: "", Preemptable: "true"}, noon, map[string]float64{"n3": 0, "n4": 0}},
		{"rz2 active", map[string]string{RevocableZone: "*"}, api.Epoch.Add(30 * time.Second), map[string]float64{"n1": 100, "n2": 100, "n3": 0, "n4": 0, "n5": 100}},
		{"rz2 active, plain task", nil, api.Epoch.Add(30 * time.Second), map[string]float64{"n3": 0, "n4": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, _ := open(t, tdmCluster(tc.ann), "allocate", zones, tc.now, nil)
			task := tu.TaskOf(t, ssn, "pg1", "p")
			got := map[string]float64{}
			for _, n := range ssn.NodeList {
				err := ssn.PredicateFn(task, n)
				score, serr := ssn.NodeOrderFn(task, n)
				if err != nil {
					var fe *api.FitError
					if !errors.As(err, &fe) || fe.Resolvable() {
						t.Errorf("%s: predicate error %v is not an unresolvable fit error", n.Name, err)
					}
					if n.Labels()[RevocableZone] == "" {
						t.Errorf("%s: a node outside revocable zones is rejected: %v", n.Name, err)
					}
					continue
				}
				if serr != nil {
					t.Errorf("%s: score error %v on a node that fits", n.Name, serr)
				}
				got[n.Name] = score
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.fit) {
				t.Errorf("fit and scores = %v, want %v", got, tc.fit)
			}
		})
	}
}

func TestPredicateReasonsAndScoreErrors(t *testing.T) {
	ssn, _ := open(t, tdmCluster(map[string]string{RevocableZone: "*"}), "allocate", zones, noon, nil)
	task := tu.TaskOf(t, ssn, "pg1", "p")
	plain, _ := open(t, tdmCluster(nil), "allocate", zones, noon, nil)
	plainTask := tu.TaskOf(t, plain, "pg1", "p")
	for _, tc := range []struct {
		ssn    *framework.Session
		task   *api.TaskInfo
		node   string
		reason string
	}{
		{ssn, task, "n5", "revocable zone rz2 is outside its window 0:00-0:01"},
		{ssn, task, "n6", "revocable zone rz3 is not configured"},
		{plain, plainTask, "n1", "task is not allowed in revocable zone rz1"},
	} {
		err := tc.ssn.PredicateFn(tc.task, tc.ssn.Nodes[tc.node])
		var fe *api.FitError
		if !errors.As(err, &fe) || !slices.Equal(fe.Reasons, []string{tc.reason}) {
			t.Errorf("%s: predicate = %v, want reason %q", tc.node, err, tc.reason)
		}
	}
	for _, n := range []string{"n5", "n6"} {
		if s, err := ssn.NodeOrderFn(task, ssn.Nodes[n]); err == nil || s != 0 {
			t.Errorf("%s: score = %v, %v; want 0 and an error (inactive zone)", n, s, err)
		}
	}
}

func TestClassKey(t *testing.T) {
	c := tdmCluster(nil)
	j := c.Snap.Jobs[0]
	c.Task(j, "q", api.Pending, "", tu.CPU(1, 1)).Annotations = map[string]string{RevocableZone: "*"}
	c.Task(j, "r", api.Pending, "", tu.CPU(1, 1)).Annotations = map[string]string{Preemptable: "true"}
	c.Task(j, "s", api.Pending, "", tu.CPU(1, 1)).Annotations = map[string]string{Preemptable: "false"}
	ssn, _ := open(t, c, "allocate", zones, noon, nil)
	key := func(name string) string {
		k, ok := ssn.TaskClass(tu.TaskOf(t, ssn, "pg1", name))
		if !ok {
			t.Fatalf("task %s has no class", name)
		}
		return k
	}
	if key("q") != key("r") || key("p") != key("s") || key("p") == key("q") {
		t.Errorf("classes: p %q q %q r %q s %q; want p = s != q = r", key("p"), key("q"), key("r"), key("s"))
	}
}

// evictionCluster: node r1 in rz1, node f1 outside zones; job a (tasks a-0..a-3 running on f1,
// a-4 on r1) and job b (b-0, b-1 running on f1, b-1 not preemptable); job p (pending preemptor
// tasks with the given annotations).
func evictionCluster(aAnn map[string]string, preemptor map[string]string, preemptorField bool) *tu.Cluster {
	c := tu.NewCluster()
	zoneNode(c, "f1", "")
	zoneNode(c, "r1", "rz1")
	c.Queue("q", 1)
	a := c.Job("a", "q", 1)
	a.Phase, a.Annotations = api.JobRunning, aAnn
	c.Tasks(a, "a", 4, api.Running, "f1", tu.CPU(1, 1))
	c.Task(a, "a-4", api.Running, "r1", tu.CPU(1, 1))
	b := c.Job("b", "q", 1)
	b.Phase = api.JobRunning
	c.Tasks(b, "b", 2, api.Running, "f1", tu.CPU(1, 1))[1].Annotations = map[string]string{Preemptable: "false"}
	p := c.Job("p", "q", 1)
	pt := c.Task(p, "p-0", api.Pending, "", tu.CPU(1, 1))
	pt.Annotations, pt.Preemptable = preemptor, preemptorField
	return c
}

func TestPreemptable(t *testing.T) {
	tests := []struct {
		name      string
		aAnn      map[string]string
		preemptor map[string]string
		field     bool
		want      []string
	}{
		{"preemptor preemptable by default", nil, nil, true, nil},
		{"preemptor preemptable by annotation", nil, map[string]string{Preemptable: "true"}, false, nil},
		{"preemptor may use revocable zones", nil, map[string]string{RevocableZone: "*", Preemptable: "false"}, false, nil},
		// One task per job without a budget; b-1 is not preemptable; a-4 is on a revocable node.
		{"no budget", nil, map[string]string{Preemptable: "false"}, true, []string{"a-0", "b-0"}},
		{"preemptor not preemptable by field", nil, nil, false, []string{"a-0", "b-0"}},
		// 5 tasks, all running: max-unavailable 60% = 3.
		{"max-unavailable", map[string]string{JDBMaxUnavailable: "60%"}, nil, false, []string{"a-0", "a-1", "a-2", "b-0"}},
		// 5 running, min-available 3: 2.
		{"min-available", map[string]string{JDBMinAvailable: "3"}, nil, false, []string{"a-0", "a-1", "b-0"}},
		// Budget exhausted: job a gives nothing.
		{"min-available reached", map[string]string{JDBMinAvailable: "5"}, nil, false, []string{"b-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, _ := open(t, evictionCluster(tc.aAnn, tc.preemptor, tc.field), "preempt", nil, noon, nil)
			preemptor := tu.TaskOf(t, ssn, "p", "p-0")
			var cands []*api.TaskInfo
			for _, j := range []string{"a", "b"} {
				cands = append(cands, tu.JobOf(t, ssn, j).SortedTasks()...)
			}
			got := tu.Names(ssn.Preemptable(preemptor, cands))
			if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("Preemptable = %v, want %v", got, tc.want)
			}
		})
	}
}

// victimCluster ports Volcano's Test_TDM_victimsFn: job pg1 (p1..p5 on n1, p1-p3 preemptable,
// p4, p5 not) and job pg2 (p6..p10 on n2, all preemptable), both nodes in rz1.
func victimCluster(pg1, pg2 map[string]string) *tu.Cluster {
	c := tu.NewCluster()
	zoneNode(c, "n1", "rz1")
	zoneNode(c, "n2", "rz1")
	if pg1 != nil {
		c.Queue("c1", 1)
		j := c.Job("pg1", "c1", 0)
		j.Phase, j.Annotations = api.JobRunning, pg1
		for i := 1; i <= 5; i++ {
			c.Task(j, fmt.Sprintf("p%d", i), api.Running, "n1", tu.CPU(1, 1)).Annotations =
				map[string]string{Preemptable: fmt.Sprint(i <= 3)}
		}
	}
	if pg2 != nil {
		c.Queue("c2", 1)
		j := c.Job("pg2", "c2", 0)
		j.Phase, j.Annotations = api.JobRunning, pg2
		for i := 6; i <= 10; i++ {
			c.Task(j, fmt.Sprintf("p%d", i), api.Running, "n2", tu.CPU(1, 1)).Annotations =
				map[string]string{Preemptable: "true"}
		}
	}
	return c
}

func TestVictimTasks(t *testing.T) {
	inactive := map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01"}
	active := map[string]string{"tdm.revocable-zone.rz1": "0:00-0:00"}
	tests := []struct {
		name     string
		pg1, pg2 map[string]string
		args     map[string]string
		want     []string
	}{
		// Volcano's cases, in order.
		{"max-unavailable 30%", map[string]string{JDBMaxUnavailable: "30%"}, nil, inactive, []string{"p1", "p2"}},
		{"zone active", map[string]string{JDBMaxUnavailable: "30%"}, nil, active, nil},
		{"max-unavailable 99%", map[string]string{JDBMaxUnavailable: "99%"}, nil, inactive, []string{"p1", "p2", "p3"}},
		{"max-unavailable 50%", nil, map[string]string{JDBMaxUnavailable: "50%"}, inactive, []string{"p10", "p6", "p7"}},
		{"two jobs", map[string]string{JDBMaxUnavailable: "90%"}, map[string]string{JDBMaxUnavailable: "50%"}, inactive, []string{"p1", "p2", "p3", "p10", "p6", "p7"}},
		{"max-unavailable 3", nil, map[string]string{JDBMaxUnavailable: "3"}, inactive, []string{"p10", "p6", "p7"}},
		{"min-available 3", nil, map[string]string{JDBMinAvailable: "3"}, inactive, []string{"p10", "p6"}},
		{"min-available 30%", nil, map[string]string{JDBMinAvailable: "30%"}, inactive, []string{"p10", "p6", "p7"}},
		{"min-available and max-unavailable", map[string]string{JDBMaxUnavailable: "3"}, map[string]string{JDBMinAvailable: "2"}, inactive, []string{"p1", "p2", "p3", "p10", "p6", "p7"}},
		// More.
		{"no budget", map[string]string{}, map[string]string{}, inactive, []string{"p1", "p10"}},
		{"min-available above running", nil, map[string]string{JDBMinAvailable: "6"}, inactive, []string{"p10"}},
		{"both annotations: min-available wins", nil, map[string]string{JDBMinAvailable: "4", JDBMaxUnavailable: "5"}, inactive, []string{"p10"}},
		{"malformed budget", nil, map[string]string{JDBMaxUnavailable: "half"}, inactive, nil},
		{"zone not configured", map[string]string{}, nil, map[string]string{"tdm.revocable-zone.rz9": "0:00-0:01"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, _ := open(t, victimCluster(tc.pg1, tc.pg2), "preempt", tc.args, noon, nil)
			got := tu.Names(ssn.VictimTasks(nil))
			if !slices.Equal(got, tc.want) {
				t.Errorf("VictimTasks = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVictimTasksBudgetCountsUnavailableTasks(t *testing.T) {
	c := victimCluster(nil, map[string]string{JDBMaxUnavailable: "3"})
	j := c.Snap.Jobs[0]
	// One pending and one finished task: 7 tasks, 1 unavailable, so 2 more may go.
	c.Task(j, "p11", api.Pending, "", tu.CPU(1, 1))
	c.Task(j, "p12", api.Succeeded, "", tu.CPU(1, 1))
	ssn, _ := open(t, c, "preempt", map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01"}, noon, nil)
	if got := tu.Names(ssn.VictimTasks(nil)); !slices.Equal(got, []string{"p10", "p6"}) {
		t.Errorf("VictimTasks = %v, want [p10 p6]", got)
	}
}

func TestVictimTasksPeriod(t *testing.T) {
	mem := framework.NewMemory()
	args := map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01", ArgEvictPeriod: "1m"}
	steps := []struct {
		after time.Duration
		want  int
	}{
		{0, 1},
		{30 * time.Second, 0},
		{59 * time.Second, 0},
		{60 * time.Second, 1}, // the period has passed exactly
		{61 * time.Second, 0},
		{2 * time.Minute, 1},
	}
	for _, s := range steps {
		ssn, _ := open(t, victimCluster(nil, map[string]string{}), "preempt", args, noon.Add(s.after), mem)
		if got := ssn.VictimTasks(nil); len(got) != s.want {
			t.Errorf("after %v: %d victims, want %d", s.after, len(got), s.want)
		}
	}
	// Within one session, a second search comes too early.
	ssn, _ := open(t, victimCluster(nil, map[string]string{}), "preempt", args, noon, nil)
	if first, second := ssn.VictimTasks(nil), ssn.VictimTasks(nil); len(first) != 1 || len(second) != 0 {
		t.Errorf("victims in one session: %d then %d, want 1 then 0", len(first), len(second))
	}
	// An active zone still counts as a search.
	mem = framework.NewMemory()
	act := map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01", ArgEvictPeriod: "10m"}
	ssn, _ = open(t, victimCluster(nil, map[string]string{}), "preempt", act, api.Epoch, mem)
	if got := ssn.VictimTasks(nil); len(got) != 0 {
		t.Fatalf("active zone: %d victims", len(got))
	}
	ssn, _ = open(t, victimCluster(nil, map[string]string{}), "preempt", act, api.Epoch.Add(5*time.Minute), mem)
	if got := ssn.VictimTasks(nil); len(got) != 0 {
		t.Errorf("zone closed but within the period: %d victims, want 0", len(got))
	}
}

// jobsCluster: jobs x (created first, preemptable by annotation), y (label "true"), z (no
// flag), w (annotation "false" over label "true"), v (malformed annotation), each with tasks
// of the given statuses.
func jobsCluster() *tu.Cluster {
	c := tu.NewCluster()
	zoneNode(c, "n1", "")
	c.Queue("q", 1)
	for _, j := range []struct {
		name        string
		ann, labels map[string]string
		min         int32
		statuses    []api.TaskStatus
	}{
		{"x", map[string]string{Preemptable: "true"}, nil, 2, []api.TaskStatus{api.Pending, api.Running}},
		{"y", nil, map[string]string{Preemptable: "true"}, 2, []api.TaskStatus{api.Running, api.Running}},
		{"z", nil, nil, 3, []api.TaskStatus{api.Pending, api.Running, api.Running}},
		{"w", map[string]string{Preemptable: "false"}, map[string]string{Preemptable: "true"}, 1, []api.TaskStatus{api.Running}},
		{"v", map[string]string{Preemptable: "yes please"}, nil, 1, []api.TaskStatus{api.Pending}},
	} {
		job := c.Job(j.name, "q", j.min)
		job.Annotations, job.Labels = j.ann, j.labels
		for i, s := range j.statuses {
			node := ""
			if s == api.Running {
				node = "n1"
			}
			c.Task(job, fmt.Sprintf("%s-%d", j.name, i), s, node, tu.CPU(1, 1))
		}
	}
	return c
}

func TestJobOrder(t *testing.T) {
	ssn, _ := open(t, jobsCluster(), "allocate", nil, noon, nil)
	jobs := []*api.JobInfo{}
	for _, n := range []string{"x", "y", "z", "w", "v"} {
		jobs = append(jobs, tu.JobOf(t, ssn, n))
	}
	sort.SliceStable(jobs, func(i, j int) bool { return ssn.JobOrderFn(jobs[i], jobs[j]) })
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name)
	}
	// Not preemptable first (z, w, v by creation), then preemptable (x, y).
	if want := []string{"z", "w", "v", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("job order = %v, want %v", got, want)
	}
}

func TestJobStarving(t *testing.T) {
	ssn, _ := open(t, jobsCluster(), "preempt", nil, noon, nil)
	for name, want := range map[string]bool{"x": false, "y": false, "z": true, "w": false, "v": true} {
		if got := ssn.JobStarving(tu.JobOf(t, ssn, name)); got != want {
			t.Errorf("JobStarving(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestJobPipelined(t *testing.T) {
	c := jobsCluster()
	// u: minAvailable 2, one running and one pipelined below.
	u := c.Job("u", "q", 2)
	c.Task(u, "u-0", api.Running, "n1", tu.CPU(1, 1))
	c.Task(u, "u-1", api.Pending, "", tu.CPU(1, 1))
	ssn, _ := open(t, c, "allocate", nil, noon, nil)
	stmt := ssn.NewStatement()
	if err := stmt.Pipeline(tu.TaskOf(t, ssn, "u", "u-1"), "n1"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"x": false, "y": true, "z": false, "w": true, "v": false, "u": true} {
		if got := ssn.JobPipelined(tu.JobOf(t, ssn, name)); got != want {
			t.Errorf("JobPipelined(%s) = %v, want %v", name, got, want)
		}
	}
}

// TestAllocate runs allocate on Volcano's Test_TDM cluster (the scenarios
// testdata/scenarios/volcano/tdm-*.yaml): the task lands on n1 when it may use revocable zones
// (score 100, ties by name), else on n3.
func TestAllocate(t *testing.T) {
	for _, tc := range []struct {
		name string
		ann  map[string]string
		want string
	}{
		{"preemptable task rz available", map[string]string{RevocableZone: "*"}, "n1"},
		{"not preemptable task", nil, "n3"},
		{"preemptable annotation", map[string]string{Preemptable: "true"}, "n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ssn, reg := open(t, tdmCluster(tc.ann), "allocate", zones, noon, nil)
			if err := ssn.RunActions(reg); err != nil {
				t.Fatal(err)
			}
			r := ssn.Close()
			var got []string
			for _, d := range r.Decisions {
				got = append(got, d.Kind.String()+" "+d.Task+" "+d.Node)
			}
			if want := []string{"bind ns/p " + tc.want}; !slices.Equal(got, want) {
				t.Errorf("decisions = %v, want %v", got, want)
			}
		})
	}
}

// TestShuffleEvictsFromClosedZone runs the shuffle action: the victims of a closed zone are
// evicted, one per job without a budget.
func TestShuffleEvictsFromClosedZone(t *testing.T) {
	ssn, reg := open(t, victimCluster(map[string]string{}, map[string]string{}), "shuffle",
		map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01"}, noon, nil)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ssn.Close().Decisions {
		got = append(got, d.Kind.String()+" "+d.Task)
	}
	if want := []string{"evict ns/p1", "evict ns/p10"}; !slices.Equal(got, want) {
		t.Errorf("decisions = %v, want %v", got, want)
	}
}

// TestNextChange walks two days second by second for several windows, in UTC and UTC+9: every
// change of a zone's activity falls on a wake-up the walk from wake-up to wake-up visits.
func TestNextChange(t *testing.T) {
	for _, raw := range []string{"0:00-0:00", "0:00-0:01", "10:00-21:00", "22:00-6:00", "23:59-0:00"} {
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("UTC+9", 9*3600)} {
			p, err := New(conf.Arguments{"tdm.revocable-zone.z": raw})
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*plugin)
			w := pl.zones["z"]
			start := api.Epoch.In(loc).Add(90 * time.Minute)
			end := start.Add(48 * time.Hour)
			wakes := map[int64]bool{}
			for now := start; now.Before(end); {
				at, ok := pl.nextChange(now)
				if !ok || !at.After(now) {
					t.Fatalf("%s %s: no wake-up after %v", raw, loc, now)
				}
				wakes[at.Unix()] = true
				now = at
			}
			for s := start.Add(time.Second); s.Before(end); s = s.Add(time.Second) {
				if w.active(s) != w.active(s.Add(-time.Second)) && !wakes[s.Unix()] {
					t.Errorf("%s %s: the zone changes at %v, which is no wake-up", raw, loc, s)
				}
			}
		}
	}
}

// TestWakeUpEvictPeriod: with a zone outside its window the session also wakes when the
// eviction period since the last search ends; with every zone active it does not.
func TestWakeUpEvictPeriod(t *testing.T) {
	args := map[string]string{"tdm.revocable-zone.rz1": "0:00-0:01", ArgEvictPeriod: "1m"}
	mem := framework.NewMemory()
	ssn, _ := open(t, victimCluster(nil, map[string]string{}), "preempt", args, noon, mem)
	ssn.VictimTasks(nil)
	if at, ok := ssn.WakeUp(); !ok || !at.Equal(noon.Add(time.Minute)) {
		t.Errorf("closed zone: wake-up %v %v, want noon+1m", at, ok)
	}
	ssn, _ = open(t, victimCluster(nil, map[string]string{}), "preempt", args, api.Epoch, mem)
	if at, ok := ssn.WakeUp(); !ok || !at.Equal(api.Epoch.Add(time.Minute+time.Second)) {
		t.Errorf("open zone: wake-up %v %v, want the second after the window's end", at, ok)
	}
}
