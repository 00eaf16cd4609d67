package scenario

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ParseError is a problem in a scenario or cluster file. Its message is
// "file: path: problem", for example
// `bad.yaml: cluster.nodes[0].allocatable.cpu: invalid quantity "lots"`;
// the path is empty for problems with the file as a whole.
type ParseError struct {
	// File is the file's path as given to the parser.
	File string
	// Path is the key path, for example "cluster.nodes[0].allocatable.cpu".
	Path string
	// Line is the 1-based line of the offending YAML node, 0 when unknown.
	Line int
	// Msg says what is wrong and what was expected.
	Msg string
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Path + ": " + e.Msg
}

// abort carries a *ParseError out of the decoder through panic; parse
// functions recover it at their boundary.
type abort struct{ err *ParseError }

// decoder walks a yaml.Node tree, failing on the first problem.
type decoder struct {
	file string
}

// failf aborts decoding with an error at path, located at node n (may be nil).
func (d *decoder) failf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	panic(abort{&ParseError{File: d.file, Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}})
}

// catch turns an abort panic into *err; other panics propagate.
func catch(err *error) {
	if r := recover(); r != nil {
		a, ok := r.(abort)
		if !ok {
			panic(r)
		}
		*err = a.err
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// join appends a mapping key to a path: "a.b" for plain keys, `a["x.y/z"]`
// for keys with other characters.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// elem appends a sequence index to a path.
func elem(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
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
		if n.ShortTag() == "!!null" {
			return "nothing (null)"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected YAML node"
}

// fields is a decoded YAML mapping with string keys, checked against the
// keys allowed at its path.
type fields struct {
	d     *decoder
	node  *yaml.Node
	path  string
	vals  map[string]*yaml.Node
	order []string
}

// mapping decodes n as a mapping whose keys must all be in allowed.
func (d *decoder) mapping(n *yaml.Node, path string, allowed ...string) *fields {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping, got %s", kindName(n))
	}
	f := &fields{d: d, node: n, path: path, vals: map[string]*yaml.Node{}}
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := deref(n.Content[i]), n.Content[i+1]
		if kn.Kind != yaml.ScalarNode || kn.ShortTag() == "!!null" {
			d.failf(kn, path, "expected a string key, got %s", kindName(kn))
		}
		k := kn.Value
		if !ok[k] {
			d.failf(kn, join(path, k), "unknown key (expected one of: %s)", strings.Join(allowed, ", "))
		}
		if _, dup := f.vals[k]; dup {
			d.failf(kn, join(path, k), "duplicate key")
		}
		f.vals[k] = vn
		f.order = append(f.order, k)
	}
	return f
}

// has reports whether key is present.
func (f *fields) has(key string) bool { _, ok := f.vals[key]; return ok }

// get returns key's value node, or nil when absent.
func (f *fields) get(key string) *yaml.Node { return f.vals[key] }

// need returns key's value node, failing when absent.
func (f *fields) need(key string) *yaml.Node {
	v, ok := f.vals[key]
	if !ok {
		f.d.failf(f.node, f.path, "missing required key %q", key)
	}
	return v
}

// at returns the path of key.
func (f *fields) at(key string) string { return join(f.path, key) }

// str decodes a required string key.
func (f *fields) str(key string) string { return f.d.str(f.need(key), f.at(key)) }

// optStr decodes an optional string key, returning def when absent.
func (f *fields) optStr(key, def string) string {
	if !f.has(key) {
		return def
	}
	return f.d.str(f.get(key), f.at(key))
}

// optInt decodes an optional integer key within [lo, hi], returning def
// when absent.
func (f *fields) optInt(key string, def, lo, hi int64) int64 {
	if !f.has(key) {
		return def
	}
	return f.d.intIn(f.get(key), f.at(key), lo, hi)
}

// optFloat decodes an optional number key of at least lo, returning def
// when absent.
func (f *fields) optFloat(key string, def, lo float64) float64 {
	if !f.has(key) {
		return def
	}
	v := f.d.number(f.get(key), f.at(key))
	if v < lo {
		f.d.failf(f.get(key), f.at(key), "must be at least %g, got %g", lo, v)
	}
	return v
}

// optBool decodes an optional boolean key, returning def when absent.
func (f *fields) optBool(key string, def bool) bool {
	if !f.has(key) {
		return def
	}
	return f.d.boolean(f.get(key), f.at(key))
}

// optEnum decodes an optional key whose value must be one of values,
// returning def when absent.
func (f *fields) optEnum(key, def string, values ...string) string {
	if !f.has(key) {
		return def
	}
	return f.d.enum(f.get(key), f.at(key), values...)
}

// scalar checks that n is a non-null scalar.
func (d *decoder) scalar(n *yaml.Node, path, want string) *yaml.Node {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.failf(n, path, "expected %s, got %s", want, kindName(n))
	}
	return n
}

// str decodes a string; numbers and booleans are accepted as written.
func (d *decoder) str(n *yaml.Node, path string) string {
	return d.scalar(n, path, "a string").Value
}

// name decodes a non-empty string.
func (d *decoder) name(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if strings.TrimSpace(s) == "" {
		d.failf(n, path, "must not be empty")
	}
	return s
}

// integer decodes an integer.
func (d *decoder) integer(n *yaml.Node, path string) int64 {
	n = d.scalar(n, path, "an integer")
	var v int64
	if n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.failf(n, path, "expected an integer, got %q", n.Value)
	}
	return v
}

// intIn decodes an integer within [lo, hi].
func (d *decoder) intIn(n *yaml.Node, path string, lo, hi int64) int64 {
	v := d.integer(n, path)
	if v < lo || v > hi {
		switch {
		case hi == math.MaxInt32 || hi == math.MaxInt64:
			d.failf(n, path, "must be at least %d, got %d", lo, v)
		default:
			d.failf(n, path, "must be between %d and %d, got %d", lo, hi, v)
		}
	}
	return v
}

// number decodes a number.
func (d *decoder) number(n *yaml.Node, path string) float64 {
	n = d.scalar(n, path, "a number")
	var v float64
	if (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil ||
		math.IsNaN(v) || math.IsInf(v, 0) {
		d.failf(n, path, "expected a number, got %q", n.Value)
	}
	return v
}

// boolean decodes a boolean.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	n = d.scalar(n, path, "true or false")
	var v bool
	if n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.failf(n, path, "expected true or false, got %q", n.Value)
	}
	return v
}

// enum decodes a string that must be one of values (case-sensitive).
func (d *decoder) enum(n *yaml.Node, path string, values ...string) string {
	s := d.str(n, path)
	for _, v := range values {
		if s == v {
			return s
		}
	}
	d.failf(n, path, "invalid value %q (expected one of: %s)", s, strings.Join(values, ", "))
	return ""
}

// quantity decodes a non-negative Kubernetes quantity, returned as written.
func (d *decoder) quantity(n *yaml.Node, path string) string {
	n = d.scalar(n, path, "a quantity")
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		d.failf(n, path, "invalid quantity %q (expected Kubernetes quantity syntax such as 4, 500m, 8Gi)", n.Value)
	}
	if q.Sign() < 0 {
		d.failf(n, path, "invalid quantity %q: must not be negative", n.Value)
	}
	return n.Value
}

// list decodes a sequence, calling fn with each element and its path.
func (d *decoder) list(n *yaml.Node, path string, fn func(i int, n *yaml.Node, path string)) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.failf(n, path, "expected a list, got %s", kindName(n))
	}
	for i, e := range n.Content {
		fn(i, e, elem(path, i))
	}
}

// entries decodes a mapping with arbitrary string keys, calling fn with each
// key, value and path in file order.
func (d *decoder) entries(n *yaml.Node, path string, fn func(key string, v *yaml.Node, path string)) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping, got %s", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := deref(n.Content[i])
		if kn.Kind != yaml.ScalarNode || kn.ShortTag() == "!!null" || kn.Value == "" {
			d.failf(kn, path, "expected a non-empty string key, got %s", kindName(kn))
		}
		if seen[kn.Value] {
			d.failf(kn, join(path, kn.Value), "duplicate key")
		}
		seen[kn.Value] = true
		fn(kn.Value, n.Content[i+1], join(path, kn.Value))
	}
}

// strMap decodes a mapping of strings (labels, annotations, selectors).
func (d *decoder) strMap(n *yaml.Node, path string) map[string]string {
	m := map[string]string{}
	d.entries(n, path, func(k string, v *yaml.Node, p string) { m[k] = d.str(v, p) })
	return m
}

// resources decodes a resource list: resource name to quantity.
func (d *decoder) resources(n *yaml.Node, path string) map[string]string {
	m := map[string]string{}
	d.entries(n, path, func(k string, v *yaml.Node, p string) { m[k] = d.quantity(v, p) })
	return m
}

// strList decodes a list of strings.
func (d *decoder) strList(n *yaml.Node, path string) []string {
	out := []string{}
	d.list(n, path, func(_ int, e *yaml.Node, p string) { out = append(out, d.str(e, p)) })
	return out
}
