package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"
)

// The native trace format: one job per JSON object on its own line (JSON lines), or a YAML
// document holding a list of jobs (or a mapping with a "jobs" list). A file whose first line
// that is neither blank nor a '#' comment begins with '{' is JSON lines. The keys of a job:
//
//	name           job name, unique in the trace (default "job-N", N its 1-based position)
//	namespace      default "default"
//	submit         seconds from the start of the trace (a number, or a duration like "1h30m"); required
//	duration       run time once the gang runs (as submit); required
//	queue          default "default"
//	priorityClass  a priority class of the cluster
//	priority       an integer priority (when no class is given)
//	gang           number of identical tasks (default 1), each asking for resources
//	resources      per task: {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}
//	tasks          instead of gang and resources: [{role, replicas, resources, preemptable}]
//	minAvailable   tasks that must run at once (default: every task)
//	preemptable    whether the tasks may be preempted (default false)
//	labels         job labels (strings)
var (
	jobKeys  = []string{"name", "namespace", "submit", "duration", "queue", "priorityClass", "priority", "gang", "resources", "tasks", "minAvailable", "preemptable", "labels"}
	taskKeys = []string{"role", "replicas", "resources", "preemptable"}
	// nameRE is what the store accepts for names (a DNS-1123 subdomain, loosely).
	nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,251}[a-z0-9])?$`)
)

// maxTasksPerJob bounds a job's tasks, so that a typo cannot ask for billions of objects.
const maxTasksPerJob = 100000

// ReadNative reads a trace in Sluice's own format (JSON lines or YAML, see above). A bad job
// is refused with a *LineError naming its line and key. file names the input in errors.
func ReadNative(file string, r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d := &nativeDecoder{file: file, names: map[string]int{}}
	tr := &Trace{Format: "native", Skipped: map[string]int{}}
	if isJSONLines(data) {
		err = d.jsonLines(data, tr)
	} else {
		err = d.yamlDoc(data, tr)
	}
	if err != nil {
		return nil, err
	}
	sortBySubmit(tr.Jobs)
	return tr, nil
}

// isJSONLines reports whether the first significant line begins with '{'.
func isJSONLines(data []byte) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		return l[0] == '{'
	}
	return false
}

type nativeDecoder struct {
	file string
	// line is added to node lines (JSON lines parse one line at a time).
	line  int
	names map[string]int
}

func (d *nativeDecoder) jsonLines(data []byte, tr *Trace) (err error) {
	defer catchFailure(&err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), maxSWFLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		d.line = line - 1
		if text[0] != '{' {
			d.failf(&yaml.Node{Line: 1}, "", "expected a JSON object, one job per line")
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(text, &doc); err != nil {
			d.failf(&yaml.Node{Line: 1}, "", "invalid JSON (%s)", yamlMsg(err))
		}
		tr.Jobs = append(tr.Jobs, d.job(doc.Content[0], len(tr.Jobs)))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			d.line = line
			d.failf(&yaml.Node{Line: 1}, "", "line longer than %d bytes", maxSWFLine)
		}
		return fmt.Errorf("%s: %w", d.file, err)
	}
	return nil
}

func (d *nativeDecoder) yamlDoc(data []byte, tr *Trace) (err error) {
	defer catchFailure(&err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty trace
		}
		d.failf(&yaml.Node{Line: yamlLine(err)}, "", "invalid YAML (%s)", yamlMsg(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.failf(&yaml.Node{Line: max(extra.Line, 1)}, "", "expected a single YAML document")
	}
	root := deref(doc.Content[0])
	list := root
	if root.Kind == yaml.MappingNode {
		fields := d.mapping(root, "", "jobs")
		list = fields["jobs"]
		if list == nil {
			return nil
		}
	}
	if list.Kind != yaml.SequenceNode {
		d.failf(list, "jobs", "expected a list of jobs, got %s", kindName(list))
	}
	for _, n := range list.Content {
		tr.Jobs = append(tr.Jobs, d.job(deref(n), len(tr.Jobs)))
	}
	return nil
}

// job decodes the job at position i (0-based).
func (d *nativeDecoder) job(n *yaml.Node, i int) *Job {
	f := d.mapping(n, "", jobKeys...)
	j := &Job{Namespace: "default", Queue: "default", Line: d.line + n.Line}
	j.Name = fmt.Sprintf("job-%d", i+1)
	if v := f["name"]; v != nil {
		j.Name = d.name(v, "name")
	}
	if v := f["namespace"]; v != nil {
		j.Namespace = d.name(v, "namespace")
	}
	if prev, ok := d.names[j.Key()]; ok {
		d.failf(n, "name", "job %q already defined on line %d", j.Key(), prev)
	}
	d.names[j.Key()] = j.Line
	for _, k := range []string{"submit", "duration"} {
		if f[k] == nil {
			d.failf(n, k, "required")
		}
	}
	j.Submit = d.seconds(f["submit"], "submit")
	j.Duration = d.seconds(f["duration"], "duration")
	if v := f["queue"]; v != nil {
		j.Queue = d.name(v, "queue")
	}
	if v := f["priorityClass"]; v != nil {
		j.PriorityClass = d.name(v, "priorityClass")
	}
	if v := f["priority"]; v != nil {
		j.Priority, j.HasPriority = int32(d.integer(v, "priority", math.MinInt32, math.MaxInt32)), true
	}
	preempt := false
	if v := f["preemptable"]; v != nil {
		preempt = d.boolean(v, "preemptable")
	}
	if v := f["labels"]; v != nil {
		j.Labels = d.strMap(v, "labels")
	}
	switch {
	case f["tasks"] != nil && (f["gang"] != nil || f["resources"] != nil):
		d.failf(f["tasks"], "tasks", "give either tasks, or gang and resources, not both")
	case f["tasks"] != nil:
		j.Tasks = d.taskGroups(f["tasks"], preempt)
	default:
		g := TaskGroup{Replicas: 1, Preemptable: preempt}
		if v := f["gang"]; v != nil {
			g.Replicas = int(d.integer(v, "gang", 1, maxTasksPerJob))
		}
		if f["resources"] == nil {
			d.failf(n, "resources", "required (or give tasks)")
		}
		g.Resources = d.resources(f["resources"], "resources")
		j.Tasks = []TaskGroup{g}
	}
	if j.TaskCount() > maxTasksPerJob {
		d.failf(f["tasks"], "tasks", "at most %d tasks per job, got %d", maxTasksPerJob, j.TaskCount())
	}
	if v := f["minAvailable"]; v != nil {
		j.MinAvailable = int32(d.integer(v, "minAvailable", 1, int64(j.TaskCount())))
	}
	return j
}

func (d *nativeDecoder) taskGroups(n *yaml.Node, preempt bool) []TaskGroup {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.failf(n, "tasks", "expected a non-empty list of task groups, got %s", kindName(n))
	}
	var out []TaskGroup
	roles := map[string]bool{}
	for i, tn := range n.Content {
		p := fmt.Sprintf("tasks[%d]", i)
		f := d.mapping(tn, p, taskKeys...)
		g := TaskGroup{Replicas: 1, Preemptable: preempt}
		if v := f["role"]; v != nil {
			g.Role = d.name(v, p+".role")
		}
		if roles[g.Role] {
			d.failf(tn, p+".role", "role %q appears twice", g.Role)
		}
		roles[g.Role] = true
		if v := f["replicas"]; v != nil {
			g.Replicas = int(d.integer(v, p+".replicas", 1, maxTasksPerJob))
		}
		if f["resources"] == nil {
			d.failf(tn, p+".resources", "required")
		}
		g.Resources = d.resources(f["resources"], p+".resources")
		if v := f["preemptable"]; v != nil {
			g.Preemptable = d.boolean(v, p+".preemptable")
		}
		out = append(out, g)
	}
	return out
}

// sortBySubmit orders jobs by submit time, keeping the file's order among equal times.
func sortBySubmit(jobs []*Job) {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Submit < jobs[b].Submit })
}
