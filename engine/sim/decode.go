package sim

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluice-sched/sluice/engine/api"
)

// The native reader's strict YAML decoding: every error names its line and key.

// failure is a decoding error in flight (recovered by catch).
type failure struct{ err *LineError }

func (d *nativeDecoder) failf(n *yaml.Node, field, format string, args ...any) {
	line := d.line
	if n != nil {
		line += n.Line
	}
	panic(failure{&LineError{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}})
}

func catchFailure(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(failure)
		if !ok {
			panic(r)
		}
		*err = f.err
	}
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlLine digs the line out of a yaml error (1 when it has none).
func yamlLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

func yamlMsg(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return err.Error()
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return deref(n.Content[0])
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// mapping checks that n is a mapping whose keys are allowed and unique, and returns its
// values by key.
func (d *nativeDecoder) mapping(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping, got %s", kindName(n))
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		key := k.Value
		if !slices.Contains(allowed, key) {
			d.failf(k, join(path, key), "unknown key; allowed: %s", strings.Join(allowed, ", "))
		}
		if _, dup := out[key]; dup {
			d.failf(k, join(path, key), "appears twice")
		}
		out[key] = deref(n.Content[i+1])
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *nativeDecoder) scalar(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.failf(n, path, "expected a value, got %s", kindName(n))
	}
	return n.Value
}

func (d *nativeDecoder) name(n *yaml.Node, path string) string {
	s := d.scalar(n, path)
	if !nameRE.MatchString(s) {
		d.failf(n, path, "%q is not a valid name (lower-case letters, digits, '-', '.' and '_', starting and ending with a letter or digit, at most 253)", s)
	}
	return s
}

func (d *nativeDecoder) integer(n *yaml.Node, path string, lo, hi int64) int64 {
	s := d.scalar(n, path)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		d.failf(n, path, "expected an integer, got %q", s)
	}
	if v < lo || v > hi {
		d.failf(n, path, "must be between %d and %d, got %d", lo, hi, v)
	}
	return v
}

func (d *nativeDecoder) boolean(n *yaml.Node, path string) bool {
	switch d.scalar(n, path) {
	case "true":
		return true
	case "false":
		return false
	}
	d.failf(n, path, "expected true or false, got %q", n.Value)
	return false
}

// seconds reads a time in seconds (a number) or a Go duration ("90s", "1h30m").
func (d *nativeDecoder) seconds(n *yaml.Node, path string) time.Duration {
	s := d.scalar(n, path)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || v < 0 || v > swfMaxSeconds {
			d.failf(n, path, "must be between 0 and %g seconds, got %s", float64(swfMaxSeconds), s)
		}
		return seconds(v)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.failf(n, path, "expected seconds or a duration such as \"90s\" or \"1h30m\", got %q", s)
	}
	if v < 0 {
		d.failf(n, path, "must not be negative, got %q", s)
	}
	return v
}

// resources reads a resource list: cpu in cores, memory in bytes, anything else (GPUs) in
// units, each a Kubernetes quantity.
func (d *nativeDecoder) resources(n *yaml.Node, path string) api.Resource {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping of resource names to quantities, got %s", kindName(n))
	}
	var r api.Resource
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		p := path + "[" + strconv.Quote(name) + "]"
		if seen[name] {
			d.failf(n.Content[i], p, "appears twice")
		}
		seen[name] = true
		if name == "" || name == api.ResourcePods || strings.ContainsAny(name, " \t\n\x00") {
			d.failf(n.Content[i], p, "not a resource a task may ask for")
		}
		v := deref(n.Content[i+1])
		s := d.scalar(v, p)
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			d.failf(v, p, "expected a non-negative quantity such as \"500m\", \"2\" or \"8Gi\", got %q", s)
		}
		if q.CmpInt64(1<<50) > 0 {
			d.failf(v, p, "quantity %q is too large", s)
		}
		switch name {
		case api.ResourceCPU:
			r.MilliCPU = float64(q.MilliValue())
		case api.ResourceMemory:
			r.Memory = float64(q.Value())
		default:
			r.SetScalar(name, float64(q.MilliValue()))
		}
	}
	return r
}

func (d *nativeDecoder) strMap(n *yaml.Node, path string) map[string]string {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping of strings, got %s", kindName(n))
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = d.scalar(deref(n.Content[i+1]), path+"."+n.Content[i].Value)
	}
	return out
}
