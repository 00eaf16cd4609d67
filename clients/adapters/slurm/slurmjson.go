package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Num is a number in Slurm's JSON output. Slurm 22.05 (OpenAPI v0.0.38) writes plain
// numbers or null; 23.02 and later write objects {"set": true, "infinite": false,
// "number": N}. Both decode; Set is false for null, unset and infinite values.
type Num struct {
	Val int64
	Set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = Num{}
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var o struct {
			Set      *bool       `json:"set"`
			Infinite bool        `json:"infinite"`
			Number   json.Number `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if (o.Set != nil && !*o.Set) || o.Infinite || o.Number == "" {
			return nil
		}
		return n.parse(string(o.Number))
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			return nil
		}
		return n.parse(s)
	default:
		return n.parse(string(b))
	}
}

func (n *Num) parse(s string) error {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Num{Val: v, Set: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", s)
	}
	*n = Num{Val: int64(f), Set: true}
	return nil
}

// Strings is a list of strings in Slurm's JSON output, written as an array or (in older
// versions) as one comma-separated string.
type Strings []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*s = nil
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '[':
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*s = l
		return nil
	default:
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		for _, p := range strings.Split(one, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*s = append(*s, p)
			}
		}
		return nil
	}
}

// Has reports whether the list holds v, ignoring case.
func (s Strings) Has(v string) bool {
	for _, x := range s {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// SqueueOutput is what squeue --json prints.
type SqueueOutput struct {
	Errors []json.RawMessage `json:"errors"`
	Jobs   []Job             `json:"jobs"`
}

// SinfoOutput is what sinfo --json prints.
type SinfoOutput struct {
	Errors []json.RawMessage `json:"errors"`
	Nodes  []Node            `json:"nodes"`
}

// Job is one job of squeue --json, the fields the adapter reads.
type Job struct {
	JobID         Num     `json:"job_id"`
	Name          string  `json:"name"`
	Account       string  `json:"account"`
	Partition     string  `json:"partition"`
	UserName      string  `json:"user_name"`
	Priority      Num     `json:"priority"`
	Nice          Num     `json:"nice"`
	JobState      Strings `json:"job_state"`
	StateReason   string  `json:"state_reason"`
	NodeCount     Num     `json:"node_count"`
	Nodes         string  `json:"nodes"`
	RequiredNodes string  `json:"required_nodes"`
	Tasks         Num     `json:"tasks"`
	TresReqStr    string  `json:"tres_req_str"`
	TresAllocStr  string  `json:"tres_alloc_str"`
	TresPerNode   string  `json:"tres_per_node"`
	TresPerJob    string  `json:"tres_per_job"`
	TresPerTask   string  `json:"tres_per_task"`
	Requeue       bool    `json:"requeue"`
	RestartCnt    Num     `json:"restart_cnt"`
	ArrayTaskID   Num     `json:"array_task_id"`
	ArrayTasks    string  `json:"array_task_string"`
	HetJobID      Num     `json:"het_job_id"`
	EligibleTime  Num     `json:"eligible_time"`
	SubmitTime    Num     `json:"submit_time"`
	StartTime     Num     `json:"start_time"`
}

// Job states the adapter tells apart (Slurm's base states and the COMPLETING flag).
const (
	StatePending    = "PENDING"
	StateRunning    = "RUNNING"
	StateSuspended  = "SUSPENDED"
	StateCompleting = "COMPLETING"
)

// baseStates are Slurm's base job states; the other names squeue may print are flags.
var baseStates = map[string]bool{
	"PENDING": true, "RUNNING": true, "SUSPENDED": true, "COMPLETED": true, "CANCELLED": true,
	"FAILED": true, "TIMEOUT": true, "NODE_FAIL": true, "PREEMPTED": true, "BOOT_FAIL": true,
	"DEADLINE": true, "OUT_OF_MEMORY": true,
}

// holdFlags are state flags of a job held back by Slurm itself.
var holdFlags = []string{"REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"}

// State returns the job's state as the adapter sees it: PENDING, RUNNING, SUSPENDED,
// COMPLETING (the job ends or is being requeued and still holds nodes), or a finished
// state. Slurm 22.05 prints one name, a flag when one is set ("CONFIGURING",
// "REQUEUE_HOLD", ...); 23.02 and later print the base state and the flags.
func (j *Job) State() string {
	if j.JobState.Has(StateCompleting) {
		return StateCompleting
	}
	for _, s := range j.JobState {
		if u := strings.ToUpper(s); baseStates[u] {
			return u
		}
	}
	if len(j.JobState) == 0 {
		return ""
	}
	onNodes := strings.TrimSpace(j.Nodes) != ""
	switch strings.ToUpper(j.JobState[0]) {
	case "CONFIGURING", "POWER_UP_NODE", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "UPDATE_DB":
		// Flags of a job that has its nodes (booting, in prolog, being signalled).
		if onNodes {
			return StateRunning
		}
		return StatePending
	case "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD", "REVOKED":
		// Going back to pending; still on its nodes while they are cleaned up.
		if onNodes {
			return StateCompleting
		}
		return StatePending
	}
	return strings.ToUpper(j.JobState[0])
}

// Held reports whether a pending job is held (by its user, an administrator, a
// requeuehold, or Slurm itself).
func (j *Job) Held() bool {
	switch j.StateReason {
	case "JobHeldUser", "JobHeldAdmin":
		return true
	}
	for _, f := range holdFlags {
		if j.JobState.Has(f) {
			return true
		}
	}
	return false
}

// ID returns the job id.
func (j *Job) ID() int64 { return j.JobID.Val }

// PartitionList returns the job's partitions (a pending job may name several).
func (j *Job) PartitionList() []string {
	var out []string
	for _, p := range strings.Split(j.Partition, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NiceValue returns the job's nice value. Slurm 22.05 writes it as an unsigned 32-bit
// number (-100 as 4294967196) and null for 0.
func (j *Job) NiceValue() int32 {
	if !j.Nice.Set {
		return 0
	}
	return int32(uint32(j.Nice.Val))
}

// Node is one node of sinfo --json, the fields the adapter reads.
type Node struct {
	Name           string  `json:"name"`
	State          Strings `json:"state"`
	StateFlags     Strings `json:"state_flags"`
	CPUs           Num     `json:"cpus"`
	RealMemory     Num     `json:"real_memory"`
	Gres           string  `json:"gres"`
	Partitions     Strings `json:"partitions"`
	ActiveFeatures Strings `json:"active_features"`
	Reason         string  `json:"reason"`
}

// unavailableStates are node states and flags in which no new job may start.
var unavailableStates = []string{
	"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "NOT_RESPONDING", "NO_RESPOND",
	"FUTURE", "UNKNOWN", "MAINTENANCE", "MAINT", "POWERED_DOWN", "POWER_DOWN", "POWERING_DOWN",
	"POWERING_UP", "REBOOT_REQUESTED", "REBOOT_ISSUED", "INVALID", "INVALID_REG",
	// In an active reservation: only the reservation's jobs may use it, and the adapter
	// knows no reservations.
	"RESERVED",
}

// Unavailable reports whether the node takes no new jobs.
func (n *Node) Unavailable() bool {
	for _, s := range unavailableStates {
		if n.State.Has(s) || n.StateFlags.Has(s) {
			return true
		}
	}
	return false
}

// Partition is one partition of scontrol show partition --oneliner.
type Partition struct {
	Name         string
	State        string
	Nodes        string
	PriorityTier int32
	Default      bool
}

// Open reports whether jobs of the partition may start: UP and DRAIN partitions run queued
// jobs, DOWN and INACTIVE ones do not.
func (p *Partition) Open() bool {
	s := strings.ToUpper(p.State)
	return s == "" || s == "UP" || s == "DRAIN"
}

// ParsePartitions parses the output of scontrol show partition --oneliner: one partition a
// line, as space-separated Key=Value pairs.
func ParsePartitions(out []byte) ([]Partition, error) {
	var parts []Partition
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "No partitions") {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if ok {
				kv[k] = v
			}
		}
		name := kv["PartitionName"]
		if name == "" {
			return nil, fmt.Errorf("partition line without PartitionName: %q", line)
		}
		p := Partition{Name: name, State: kv["State"], Nodes: kv["Nodes"], Default: kv["Default"] == "YES"}
		if t, err := strconv.ParseInt(kv["PriorityTier"], 10, 32); err == nil {
			p.PriorityTier = int32(t)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// ExpandHostlist expands a Slurm host list such as "sn[1-3,07],gpu1" into node names, in
// order. Several bracket groups in one name ("r[1-2]n[1-2]") expand as a product.
func ExpandHostlist(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return nil, nil
	}
	var out []string
	for _, item := range splitTop(s, ',', '[', ']') {
		if item == "" {
			continue
		}
		names, err := expandOne(item)
		if err != nil {
			return nil, fmt.Errorf("host list %q: %w", s, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

func expandOne(item string) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.ContainsAny(item, "]") {
			return nil, fmt.Errorf("unbalanced ']' in %q", item)
		}
		return []string{item}, nil
	}
	closing := strings.IndexByte(item[open:], ']')
	if closing < 0 {
		return nil, fmt.Errorf("unbalanced '[' in %q", item)
	}
	closing += open
	prefix, ranges, rest := item[:open], item[open+1:closing], item[closing+1:]
	suffixes, err := expandOne(rest)
	if err != nil {
		return nil, err
	}
	if rest == "" {
		suffixes = []string{""}
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || b < a || b-a > 100000 {
			return nil, fmt.Errorf("bad range %q", r)
		}
		width := len(lo)
		for i := a; i <= b; i++ {
			num := strconv.Itoa(i)
			if len(num) < width {
				num = strings.Repeat("0", width-len(num)) + num
			}
			for _, suf := range suffixes {
				out = append(out, prefix+num+suf)
			}
		}
	}
	return out, nil
}

// splitTop splits s at sep outside open/close pairs.
func splitTop(s string, sep, open, closing byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closing:
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// TRES is a parsed TRES string such as "cpu=4,mem=2000M,node=2,billing=4,gres/gpu=2".
type TRES struct {
	CPU         int64
	MemoryBytes int64
	Nodes       int64
	// Gres counts by GRES name ("gpu"), from "gres/NAME" or "gres/NAME:TYPE" entries.
	Gres map[string]int64
}

// ParseTRES parses a TRES string. Memory takes Slurm's unit suffixes (K, M, G, T, P;
// M when none is given).
func ParseTRES(s string) (TRES, error) {
	t := TRES{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return TRES{}, fmt.Errorf("TRES %q: %q is not key=value", s, f)
		}
		switch {
		case k == "cpu":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: cpu: %w", s, err)
			}
			t.CPU = n
		case k == "mem":
			b, err := parseMemory(v)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: mem: %w", s, err)
			}
			t.MemoryBytes = b
		case k == "node":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: node: %w", s, err)
			}
			t.Nodes = n
		case strings.HasPrefix(k, "gres/"):
			name, typed, _ := strings.Cut(strings.TrimPrefix(k, "gres/"), ":")
			if typed != "" {
				// A typed entry ("gres/gpu:a100=2") repeats a part of the untyped total.
				continue
			}
			n, err := parseCount(v)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: %s: %w", s, k, err)
			}
			if t.Gres == nil {
				t.Gres = map[string]int64{}
			}
			t.Gres[name] = n
		}
	}
	return t, nil
}

// ParseGres parses a GRES list: a node's "gpu:a100:2(S:0-1),nic:1" or a job's
// "gres:gpu:1" / "gres/gpu:2" / "gres/gpu=2" (tres_per_node and friends). It returns the
// count by GRES name, types summed.
func ParseGres(s string) (map[string]int64, error) {
	out := map[string]int64{}
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" || s == "N/A" {
		return out, nil
	}
	for _, item := range splitTop(s, ',', '(', ')') {
		if i := strings.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		switch {
		case strings.HasPrefix(item, "gres:"):
			item = strings.TrimPrefix(item, "gres:")
		case strings.HasPrefix(item, "gres/"):
			item = strings.TrimPrefix(item, "gres/")
		case strings.Contains(item, "/"):
			// Another TRES kind (license/..., bb/...): not a GRES.
			continue
		}
		var name string
		count := int64(1)
		if k, v, ok := strings.Cut(item, "="); ok {
			name = strings.SplitN(k, ":", 2)[0]
			n, err := parseCount(v)
			if err != nil {
				return nil, fmt.Errorf("GRES %q: %w", s, err)
			}
			count = n
		} else {
			fields := strings.Split(item, ":")
			name = fields[0]
			if len(fields) > 1 {
				if n, err := parseCount(fields[len(fields)-1]); err == nil {
					count = n
				}
			}
		}
		if name == "" {
			return nil, fmt.Errorf("GRES %q: empty name", s)
		}
		out[name] += count
	}
	return out, nil
}

// parseCount parses a count with an optional K/M/G/T suffix (powers of 1024, as Slurm).
func parseCount(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M', 'm':
			mult = 1 << 20
		case 'G', 'g':
			mult = 1 << 30
		case 'T', 't':
			mult = 1 << 40
		}
		if mult != 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

// parseMemory parses a memory amount in Slurm's notation: a number with an optional unit
// suffix, megabytes (MiB) by default.
func parseMemory(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, fmt.Errorf("empty")
	}
	unit := float64(1 << 20)
	switch v[len(v)-1] {
	case 'K', 'k':
		unit, v = 1<<10, v[:len(v)-1]
	case 'M', 'm':
		unit, v = 1<<20, v[:len(v)-1]
	case 'G', 'g':
		unit, v = 1<<30, v[:len(v)-1]
	case 'T', 't':
		unit, v = 1<<40, v[:len(v)-1]
	case 'P', 'p':
		unit, v = 1<<50, v[:len(v)-1]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("bad amount %q", v)
	}
	return int64(math.Ceil(f * unit)), nil
}

// unixTime turns a Slurm timestamp (seconds) into a time; zero when unset.
func unixTime(n Num) time.Time {
	if !n.Set || n.Val <= 0 {
		return time.Time{}
	}
	return time.Unix(n.Val, 0).UTC()
}
