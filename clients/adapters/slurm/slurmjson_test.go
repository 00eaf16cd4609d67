package slurm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExpandHostlist(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"(null)", nil},
		{"sn1", []string{"sn1"}},
		{"sn[1-3]", []string{"sn1", "sn2", "sn3"}},
		{"sn1,sn2", []string{"sn1", "sn2"}},
		{"gpu[08-10,12],cpu1", []string{"gpu08", "gpu09", "gpu10", "gpu12", "cpu1"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"node[1-2]-ib", []string{"node1-ib", "node2-ib"}},
	}
	for _, c := range cases {
		got, err := ExpandHostlist(c.in)
		if err != nil {
			t.Errorf("ExpandHostlist(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ExpandHostlist(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"sn[1-", "sn]1", "sn[a-b]", "sn[3-1]"} {
		if _, err := ExpandHostlist(bad); err == nil {
			t.Errorf("ExpandHostlist(%q) succeeded", bad)
		}
	}
}

func TestParseTRES(t *testing.T) {
	got, err := ParseTRES("cpu=4,mem=2000M,node=2,billing=4,gres/gpu=2,gres/gpu:a100=2")
	if err != nil {
		t.Fatal(err)
	}
	want := TRES{CPU: 4, MemoryBytes: 2000 << 20, Nodes: 2, Gres: map[string]int64{"gpu": 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	got, err = ParseTRES("cpu=1,mem=1.5G")
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryBytes != 3<<29 {
		t.Errorf("mem=1.5G: %d bytes", got.MemoryBytes)
	}
	if _, err := ParseTRES("cpu=x"); err == nil {
		t.Error("cpu=x parsed")
	}
	if _, err := ParseTRES("nonsense"); err == nil {
		t.Error("nonsense parsed")
	}
}

func TestParseGres(t *testing.T) {
	cases := []struct {
		in   string
		want map[string]int64
	}{
		{"", map[string]int64{}},
		{"(null)", map[string]int64{}},
		{"gpu:2", map[string]int64{"gpu": 2}},
		{"gpu:a100:2(S:0-1),gpu:v100:1(S:0,1),nic:1", map[string]int64{"gpu": 3, "nic": 1}},
		{"gres:gpu:1", map[string]int64{"gpu": 1}},
		{"gres/gpu:4", map[string]int64{"gpu": 4}},
		{"gres/gpu=2,license/matlab=1", map[string]int64{"gpu": 2}},
		{"gpu:tesla", map[string]int64{"gpu": 1}},
		{"bandwidth:10G", map[string]int64{"bandwidth": 10 << 30}},
	}
	for _, c := range cases {
		got, err := ParseGres(c.in)
		if err != nil {
			t.Errorf("ParseGres(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseGres(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNumAndStringsDecodeBothSlurmFormats(t *testing.T) {
	var v struct {
		A, B, C, D, E, F Num
		S1, S2, S3       Strings
	}
	in := `{"A": 5, "B": null, "C": {"set": true, "infinite": false, "number": 7},
		"D": {"set": false, "number": 0}, "E": {"set": true, "infinite": true, "number": 0}, "F": "12",
		"S1": "RUNNING", "S2": ["PENDING", "REQUEUED"], "S3": "a,b"}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]Num{"A": v.A, "B": v.B, "C": v.C, "D": v.D, "E": v.E, "F": v.F} {
		want := map[string]Num{"A": {5, true}, "C": {7, true}, "F": {12, true}}[name]
		if got != want {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	if !reflect.DeepEqual(v.S1, Strings{"RUNNING"}) || !reflect.DeepEqual(v.S2, Strings{"PENDING", "REQUEUED"}) || !reflect.DeepEqual(v.S3, Strings{"a", "b"}) {
		t.Errorf("strings: %q %q %q", v.S1, v.S2, v.S3)
	}
}

func TestParsePartitionsFixture(t *testing.T) {
	parts, err := ParsePartitions(readFixture(t, "partitions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Partition{
		{Name: "batch", State: "UP", Nodes: "sn[1-3]", PriorityTier: 1, Default: true},
		{Name: "gpu", State: "UP", Nodes: "sn[1-2]", PriorityTier: 2},
	}
	if !reflect.DeepEqual(parts, want) {
		t.Errorf("got %+v\nwant %+v", parts, want)
	}
	if _, err := ParsePartitions([]byte("State=UP Nodes=x\n")); err == nil {
		t.Error("a line without PartitionName parsed")
	}
}

func TestDecodeRecordedOutputs(t *testing.T) {
	var sq SqueueOutput
	if err := decodeJSON(readFixture(t, "squeue.json"), &sq); err != nil {
		t.Fatal(err)
	}
	if len(sq.Jobs) != 8 {
		t.Fatalf("%d jobs, want 8", len(sq.Jobs))
	}
	byID := map[int64]*Job{}
	for i := range sq.Jobs {
		byID[sq.Jobs[i].ID()] = &sq.Jobs[i]
	}
	train := byID[1]
	if train.State() != StateRunning || train.Nodes != "sn[1-2]" || train.Account != "physics" || train.TresPerNode != "gres:gpu:1" {
		t.Errorf("job 1: %+v", train)
	}
	if j := byID[3]; !j.Held() || j.NiceValue() != -100 || j.Partition != "gpu" {
		t.Errorf("job 3: held %v nice %d partition %q", j.Held(), j.NiceValue(), j.Partition)
	}
	if j := byID[2]; j.NiceValue() != 50 {
		t.Errorf("job 2 nice %d", j.NiceValue())
	}
	if j := byID[4]; !j.Held() || j.RestartCnt.Val != 1 || j.RequiredNodes != "sn2" {
		t.Errorf("job 4 (requeued held): %+v", j)
	}
	if j := byID[7]; j.Requeue {
		t.Error("job 7 was submitted with --no-requeue")
	}
	if j := byID[8]; j.Held() || j.StateReason != "Resources" {
		t.Errorf("job 8: %+v", j)
	}

	var sqc SqueueOutput
	if err := decodeJSON(readFixture(t, "squeue-completing.json"), &sqc); err != nil {
		t.Fatal(err)
	}
	for _, j := range sqc.Jobs {
		if j.ID() == 4 && j.State() != StateCompleting {
			t.Errorf("job 4 in squeue-completing.json: state %q", j.State())
		}
	}

	var si SinfoOutput
	if err := decodeJSON(readFixture(t, "sinfo.json"), &si); err != nil {
		t.Fatal(err)
	}
	if len(si.Nodes) != 3 {
		t.Fatalf("%d nodes", len(si.Nodes))
	}
	for _, n := range si.Nodes {
		if got, want := n.Unavailable(), n.Name == "sn3"; got != want {
			t.Errorf("%s: unavailable %v (state %q flags %q)", n.Name, got, n.State, n.StateFlags)
		}
	}

	// A node with a job completing on it still takes new jobs.
	var sic SinfoOutput
	if err := decodeJSON(readFixture(t, "sinfo-completing.json"), &sic); err != nil {
		t.Fatal(err)
	}
	for _, n := range sic.Nodes {
		if n.Name == "sn2" && (!n.StateFlags.Has("COMPLETING") || n.Unavailable()) {
			t.Errorf("sn2 while a job completes: flags %q, unavailable %v", n.StateFlags, n.Unavailable())
		}
	}

	if err := decodeJSON([]byte(`{"errors":[{"error":"boom"}],"jobs":[]}`), &sq); err == nil {
		t.Error("reported errors ignored")
	}
}

func TestJobStateNames(t *testing.T) {
	cases := []struct {
		states Strings
		nodes  string
		reason string
		want   string
		held   bool
	}{
		{Strings{"PENDING"}, "", "JobHeldUser", StatePending, true},
		{Strings{"PENDING"}, "", "JobHeldAdmin", StatePending, true},
		{Strings{"PENDING"}, "", "Resources", StatePending, false},
		{Strings{"RUNNING"}, "sn1", "None", StateRunning, false},
		{Strings{"COMPLETING"}, "sn1", "None", StateCompleting, false},
		{Strings{"CONFIGURING"}, "sn[1-2]", "None", StateRunning, false},
		{Strings{"REQUEUED"}, "sn1", "None", StateCompleting, false},
		{Strings{"REQUEUE_HOLD"}, "", "None", StatePending, true},
		{Strings{"SPECIAL_EXIT"}, "", "None", StatePending, true},
		{Strings{"CANCELLED"}, "", "None", "CANCELLED", false},
		// Slurm 23.02 and later: the base state, then the flags.
		{Strings{"RUNNING", "CONFIGURING"}, "sn1", "None", StateRunning, false},
		{Strings{"RUNNING", "COMPLETING"}, "sn1", "None", StateCompleting, false},
		{Strings{"PENDING", "REQUEUE_HOLD"}, "", "None", StatePending, true},
	}
	for _, c := range cases {
		j := &Job{JobState: c.states, Nodes: c.nodes, StateReason: c.reason}
		if got := j.State(); got != c.want {
			t.Errorf("%q on %q: state %q, want %q", c.states, c.nodes, got, c.want)
		}
		if got := j.Held(); got != c.held {
			t.Errorf("%q (%s): held %v, want %v", c.states, c.reason, got, c.held)
		}
	}
}
