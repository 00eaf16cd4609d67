package deviceshare

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		args       conf.Arguments
		wantErr    string // substring; "" means success
		wantPolicy string
		wantWeight int
	}{
		{name: "no arguments", args: nil},
		{name: "binpack with weight", args: conf.Arguments{ArgSchedulePolicy: "binpack", ArgScheduleWeight: 10}, wantPolicy: PolicyBinpack, wantWeight: 10},
		{name: "spread with weight as string", args: conf.Arguments{ArgSchedulePolicy: "spread", ArgScheduleWeight: "3"}, wantPolicy: PolicySpread, wantWeight: 3},
		{name: "volcano switches accepted", args: conf.Arguments{ArgGPUSharingEnable: true, ArgNodeLockEnable: "true", ArgVGPUEnable: false}},
		{name: "vgpu alone", args: conf.Arguments{ArgVGPUEnable: true}},
		{name: "malformed boolean", args: conf.Arguments{ArgNodeLockEnable: "maybe"}, wantErr: ArgNodeLockEnable},
		{name: "sharing and number", args: conf.Arguments{ArgGPUSharingEnable: true, ArgGPUNumberEnable: true}, wantErr: ArgGPUNumberEnable},
		{name: "vgpu and sharing", args: conf.Arguments{ArgGPUSharingEnable: true, ArgVGPUEnable: true}, wantErr: ArgVGPUEnable},
		{name: "unknown policy", args: conf.Arguments{ArgSchedulePolicy: "pack"}, wantErr: ArgSchedulePolicy},
		{name: "policy not a string", args: conf.Arguments{ArgSchedulePolicy: []any{"binpack"}}, wantErr: ArgSchedulePolicy},
		{name: "malformed weight", args: conf.Arguments{ArgScheduleWeight: "ten"}, wantErr: ArgScheduleWeight},
		{name: "negative weight", args: conf.Arguments{ArgScheduleWeight: -1}, wantErr: ArgScheduleWeight},
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
			dp := p.(*plugin)
			if dp.policy != tc.wantPolicy || dp.weight != tc.wantWeight {
				t.Errorf("policy, weight = %q, %d; want %q, %d", dp.policy, dp.weight, tc.wantPolicy, tc.wantWeight)
			}
			if p.Name() != Name {
				t.Errorf("Name() = %q", p.Name())
			}
		})
	}
}

// TestPredicate checks fitting and reasons on one node n with two 80Gi H100s (g0, g1) and one
// 40Gi A100 (g2), where a running task may already hold devices.
func TestPredicate(t *testing.T) {
	type holder struct {
		ids  []string
		reqs []api.DeviceRequest
	}
	tests := []struct {
		name     string
		held     []holder
		reqs     []api.DeviceRequest
		noDevs   bool // the node has no devices
		wantErr  string
		wantCode api.FitCode
	}{
		{name: "no device request fits anywhere", noDevs: true},
		{name: "whole devices free", reqs: []api.DeviceRequest{whole(3)}},
		{name: "more whole devices than the node has", reqs: []api.DeviceRequest{whole(4)},
			wantErr: "insufficient nvidia.com/gpu devices", wantCode: api.UnschedulableAndUnresolvable},
		{name: "node without devices", noDevs: true, reqs: []api.DeviceRequest{whole(1)},
			wantErr: "insufficient nvidia.com/gpu devices", wantCode: api.UnschedulableAndUnresolvable},
		{name: "whole device taken by a share", held: []holder{{[]string{"g0"}, []api.DeviceRequest{share(1, 0)}}},
			reqs: []api.DeviceRequest{whole(3)}, wantErr: "insufficient nvidia.com/gpu devices", wantCode: api.Unschedulable},
		{name: "two whole H100s free", reqs: []api.DeviceRequest{model(whole(2), "H100")}},
		{name: "model compares without case", reqs: []api.DeviceRequest{model(whole(2), "h100")}},
		{name: "three H100s", reqs: []api.DeviceRequest{model(whole(3), "H100")},
			wantErr: "insufficient H100 devices", wantCode: api.UnschedulableAndUnresolvable},
		{name: "whole H100 held", held: []holder{{[]string{"g1"}, []api.DeviceRequest{whole(1)}}},
			reqs: []api.DeviceRequest{model(whole(2), "H100")}, wantErr: "insufficient H100 devices", wantCode: api.Unschedulable},
		{name: "share fits beside another share", held: []holder{{[]string{"g0"}, []api.DeviceRequest{share(70, 50)}}, {[]string{"g1"}, []api.DeviceRequest{share(70, 50)}}},
			reqs: []api.DeviceRequest{model(share(10, 50), "H100")}},
		{name: "share lacks memory on every H100", held: []holder{{[]string{"g0"}, []api.DeviceRequest{share(50, 10)}}, {[]string{"g1"}, []api.DeviceRequest{share(50, 10)}}},
			reqs: []api.DeviceRequest{model(share(40, 0), "H100")}, wantErr: "no H100 device with 40Gi free", wantCode: api.Unschedulable},
		{name: "share lacks cores", held: []holder{{[]string{"g0", "g1", "g2"}, []api.DeviceRequest{{Type: api.ResourceGPU, Count: 3, Cores: 80}}}},
			reqs: []api.DeviceRequest{share(1, 30)}, wantErr: "no nvidia.com/gpu device with 1Gi and 30% cores free", wantCode: api.Unschedulable},
		{name: "share larger than any device", reqs: []api.DeviceRequest{share(100, 0)},
			wantErr: "no nvidia.com/gpu device with 100Gi free", wantCode: api.UnschedulableAndUnresolvable},
		{name: "share on a device held whole", held: []holder{{[]string{"g0", "g1", "g2"}, []api.DeviceRequest{whole(3)}}},
			reqs: []api.DeviceRequest{share(1, 0)}, wantErr: "no nvidia.com/gpu device with 1Gi free", wantCode: api.Unschedulable},
		{name: "all cores need a device nobody holds", held: []holder{{[]string{"g0", "g1", "g2"}, []api.DeviceRequest{{Type: api.ResourceGPU, Count: 3, Memory: gib}}}},
			reqs: []api.DeviceRequest{share(1, 100)}, wantErr: "no nvidia.com/gpu device with 1Gi and 100% cores free", wantCode: api.Unschedulable},
		{name: "no cores asked on a device whose cores are taken", held: []holder{{[]string{"g0", "g1", "g2"}, []api.DeviceRequest{{Type: api.ResourceGPU, Count: 3, Cores: 100}}}},
			reqs: []api.DeviceRequest{share(1, 0)}, wantErr: "no nvidia.com/gpu device with 1Gi free", wantCode: api.Unschedulable},
		{name: "share on several devices", reqs: []api.DeviceRequest{{Type: api.ResourceGPU, Count: 2, Memory: 60 * gib}}},
		{name: "share on more devices than can hold it", reqs: []api.DeviceRequest{{Type: api.ResourceGPU, Count: 3, Memory: 60 * gib}},
			wantErr: "fewer than 3 nvidia.com/gpu devices with 60Gi free", wantCode: api.UnschedulableAndUnresolvable},
		{name: "two requests never share a device", reqs: []api.DeviceRequest{model(whole(2), "H100"), model(share(1, 0), "H100")},
			wantErr: "no H100 device with 1Gi free", wantCode: api.Unschedulable},
		{name: "two requests on different devices", reqs: []api.DeviceRequest{model(whole(2), "H100"), share(1, 0)}},
		{name: "other device type", reqs: []api.DeviceRequest{{Type: "amd.com/gpu", Count: 1}},
			wantErr: "insufficient amd.com/gpu devices", wantCode: api.UnschedulableAndUnresolvable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			if tc.noDevs {
				c.node("n")
			} else {
				c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80), gpu("g2", "A100", 40))
			}
			j := c.job("j", 1)
			for i, h := range tc.held {
				c.running(j, "run"+string(rune('a'+i)), "n", h.ids, h.reqs...)
			}
			c.task(j, "t", api.Pending, "", tc.reqs...)
			ssn, _ := c.open(t, config("allocate"))
			err := ssn.PredicateFn(taskOf(t, ssn, "j", "t"), ssn.Nodes["n"])
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("predicate = %v, want fit", err)
				}
				return
			}
			fe, ok := err.(*api.FitError)
			if !ok {
				t.Fatalf("predicate = %v (%T), want *api.FitError", err, err)
			}
			if !reflect.DeepEqual(fe.Reasons, []string{tc.wantErr}) || fe.Code != tc.wantCode || fe.Node != "n" {
				t.Errorf("predicate = %+v, want node n, code %d, reason %q", fe, tc.wantCode, tc.wantErr)
			}
		})
	}
}

// TestPredicateDisabled checks that enablePredicate: false turns the device filter off.
func TestPredicateDisabled(t *testing.T) {
	c := newCluster()
	c.node("n")
	c.task(c.job("j", 1), "t", api.Pending, "", whole(1))
	ssn, _ := c.open(t, "actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n    enablePredicate: false\n")
	if err := ssn.PredicateFn(taskOf(t, ssn, "j", "t"), ssn.Nodes["n"]); err != nil {
		t.Errorf("predicate = %v, want none registered", err)
	}
}

// TestScore checks the node score of each policy on node n (g0 80Gi with 40Gi used, g1 idle)
// and m (two idle 80Gi devices).
func TestScore(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		reqs   []api.DeviceRequest
		wantN  float64
		wantM  float64
		hasFns bool
	}{
		{name: "no weight, no score", args: []string{"deviceshare.SchedulePolicy: binpack"}, reqs: []api.DeviceRequest{share(20, 0)}},
		{name: "binpack prefers the fuller node", args: []string{"deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 2"},
			reqs: []api.DeviceRequest{share(20, 0)}, wantN: 2 * 75, wantM: 2 * 25, hasFns: true},
		{name: "binpack rounds the sum", args: []string{"deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 1"},
			reqs: []api.DeviceRequest{share(1, 0)}, wantN: 51, wantM: 1, hasFns: true},
		{name: "binpack counts whole devices full", args: []string{"deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 1"},
			reqs: []api.DeviceRequest{whole(1)}, wantN: 100, wantM: 100, hasFns: true},
		{name: "spread prefers idle devices", args: []string{"deviceshare.SchedulePolicy: spread", "deviceshare.ScheduleWeight: 3"},
			reqs: []api.DeviceRequest{share(20, 0)}, wantN: 0, wantM: 300, hasFns: true},
		{name: "weight without policy scores nothing", args: []string{"deviceshare.ScheduleWeight: 3"},
			reqs: []api.DeviceRequest{share(20, 0)}, hasFns: true},
		{name: "tasks without device requests score nothing", args: []string{"deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 3"}, hasFns: true},
		{name: "a node that cannot serve scores nothing", args: []string{"deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 3"},
			reqs: []api.DeviceRequest{share(60, 0), share(60, 0)}, wantN: 0, wantM: 3 * 150, hasFns: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
			c.node("m", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
			j := c.job("j", 1)
			c.running(j, "r", "n", []string{"g0"}, share(40, 0))
			c.task(j, "t", api.Pending, "", tc.reqs...)
			ssn, _ := c.open(t, config("allocate", tc.args...))
			if ssn.HasNodeOrder() != tc.hasFns {
				t.Fatalf("HasNodeOrder = %t, want %t", ssn.HasNodeOrder(), tc.hasFns)
			}
			task := taskOf(t, ssn, "j", "t")
			for node, want := range map[string]float64{"n": tc.wantN, "m": tc.wantM} {
				got, err := ssn.NodeOrderFn(task, ssn.Nodes[node])
				if err != nil || got != want {
					t.Errorf("score on %s = %v, %v; want %v", node, got, err, want)
				}
			}
		})
	}
}

func TestExclusiveRulesArgument(t *testing.T) {
	p, err := New(conf.Arguments{ArgGPUExclusiveRules: []any{map[string]any{"app": "training", "team": "ml"}, map[string]any{"workload": "inference"}}})
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*plugin)
	if got := pl.matchedRules(map[string]string{"app": "training", "team": "ml", "x": "y"}); len(got) != 1 || got[0] != 0 {
		t.Errorf("matched %v, want rule 0", got)
	}
	if got := pl.matchedRules(map[string]string{"app": "training"}); len(got) != 0 {
		t.Errorf("a partial match matched %v", got)
	}
	for _, bad := range []any{"training", []any{"app=training"}} {
		if _, err := New(conf.Arguments{ArgGPUExclusiveRules: bad}); err == nil || !strings.Contains(err.Error(), ArgGPUExclusiveRules) {
			t.Errorf("rules %v: error %v, want one naming the argument", bad, err)
		}
	}
}
