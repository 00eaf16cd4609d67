package conf

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is a parsed Volcano scheduler configuration.
type Config struct {
	// Actions are the actions a scheduling session runs, in order. Volcano
	// writes them as one comma-separated string; here they are split and
	// trimmed.
	Actions []string
	// Tiers are the plugin tiers, highest priority first.
	Tiers []Tier
	// Configurations holds per-action arguments (the "configurations" key).
	Configurations []ActionConfiguration
	// MetricsConfiguration is Volcano's "metrics" section, kept as given.
	MetricsConfiguration map[string]string

	raw []byte
}

// Tier is one tier of plugins. Plugins in an earlier tier take precedence
// over those in later tiers.
type Tier struct {
	// Plugins are the tier's plugins, in order.
	Plugins []PluginOption
}

// ActionConfiguration holds the arguments of one action, an entry of the
// "configurations" section.
type ActionConfiguration struct {
	// Name is the action's name, e.g. "allocate".
	Name string
	// Arguments are the action's arguments, nil if none were given.
	Arguments Arguments
}

// PluginOption is one plugin entry of a tier: the plugin's name, its
// arguments, and switches that turn its individual callbacks on or off. A nil
// switch is unset; PluginOption.Enabled then answers with Volcano's default.
// The field names are Volcano's.
type PluginOption struct {
	// Name is the plugin's name, e.g. "gang".
	Name string

	// EnabledJobOrder is the enableJobOrder switch (FlagJobOrder).
	EnabledJobOrder *bool
	// EnabledNamespaceOrder is the enableNamespaceOrder switch
	// (FlagNamespaceOrder).
	EnabledNamespaceOrder *bool
	// EnabledHierarchy is the enableHierarchy switch (FlagHierarchy).
	EnabledHierarchy *bool
	// EnabledJobReady is the enableJobReady switch (FlagJobReady).
	EnabledJobReady *bool
	// EnabledJobPipelined is the enableJobPipelined switch (FlagJobPipelined).
	EnabledJobPipelined *bool
	// EnabledTaskOrder is the enableTaskOrder switch (FlagTaskOrder).
	EnabledTaskOrder *bool
	// EnabledPreemptable is the enablePreemptable switch (FlagPreemptable).
	EnabledPreemptable *bool
	// EnabledReclaimable is the enableReclaimable switch (FlagReclaimable).
	EnabledReclaimable *bool
	// EnablePreemptive is the enablePreemptive switch (FlagPreemptive).
	EnablePreemptive *bool
	// EnabledQueueOrder is the enableQueueOrder switch (FlagQueueOrder).
	EnabledQueueOrder *bool
	// EnabledClusterOrder is the enabledClusterOrder switch (FlagClusterOrder).
	EnabledClusterOrder *bool
	// EnabledPredicate is the enablePredicate switch (FlagPredicate).
	EnabledPredicate *bool
	// EnabledBestNode is the enableBestNode switch (FlagBestNode).
	EnabledBestNode *bool
	// EnabledNodeOrder is the enableNodeOrder switch (FlagNodeOrder).
	EnabledNodeOrder *bool
	// EnabledTargetJob is the enableTargetJob switch (FlagTargetJob).
	EnabledTargetJob *bool
	// EnabledReservedNodes is the enableReservedNodes switch
	// (FlagReservedNodes).
	EnabledReservedNodes *bool
	// EnabledJobEnqueued is the enableJobEnqueued switch (FlagJobEnqueued).
	EnabledJobEnqueued *bool
	// EnabledVictim is the enabledVictim switch (FlagVictim).
	EnabledVictim *bool
	// EnabledJobStarving is the enableJobStarving switch (FlagJobStarving).
	EnabledJobStarving *bool
	// EnabledOverused is the enabledOverused switch (FlagOverused).
	EnabledOverused *bool
	// EnabledAllocatable is the enabledAllocatable switch (FlagAllocatable).
	EnabledAllocatable *bool
	// EnabledHyperNodeOrder is the enabledHyperNodeOrder switch
	// (FlagHyperNodeOrder).
	EnabledHyperNodeOrder *bool
	// EnabledSubJobReady is the enabledSubJobReady switch (FlagSubJobReady).
	EnabledSubJobReady *bool
	// EnabledSubJobPipelined is the enabledSubJobPipelined switch
	// (FlagSubJobPipelined).
	EnabledSubJobPipelined *bool
	// EnabledSubJobOrder is the enabledSubJobOrder switch (FlagSubJobOrder).
	EnabledSubJobOrder *bool
	// EnabledHyperNodeGradient is the enabledHyperNodeGradient switch
	// (FlagHyperNodeGradient).
	EnabledHyperNodeGradient *bool

	// Arguments are the plugin's arguments, nil if none were given.
	Arguments Arguments
}

// Error is a problem found in a configuration by Parse or Validate.
type Error struct {
	// Path locates the problem, e.g. "tiers[1].plugins[2]"; it is empty for
	// the document as a whole.
	Path string
	// Line is the 1-based line of the problem in the parsed text, or 0 if
	// unknown.
	Line int
	// Msg describes the problem.
	Msg string
}

// Error formats the error as "path: msg (line N)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	return b.String()
}

//go:embed default.yaml
var defaultYAML []byte

// Default returns Volcano's default scheduler configuration: actions
// "enqueue, allocate, backfill"; a first tier of priority, gang and
// conformance; a second tier of overcommit, drf, predicates, proportion,
// nodeorder and binpack. Each call returns a fresh copy.
func Default() *Config {
	c, err := Parse(defaultYAML)
	if err != nil {
		panic("conf: embedded default configuration is invalid: " + err.Error())
	}
	return c
}

// Raw returns a copy of the text the configuration was parsed from, or nil if
// it was not produced by Parse or Default.
func (c *Config) Raw() []byte {
	return bytes.Clone(c.raw)
}

// ActionArguments returns the arguments given for the named action in the
// "configurations" section, or nil if there are none. Like Volcano, the first
// entry with that name wins.
func (c *Config) ActionArguments(name string) Arguments {
	for _, ac := range c.Configurations {
		if ac.Name == name {
			return ac.Arguments
		}
	}
	return nil
}

// maxNodes bounds the number of YAML nodes Parse visits, counting every
// expansion of an alias, so that alias bombs fail instead of exhausting memory.
const maxNodes = 1 << 20

// parser walks a YAML node tree, charging a node budget as it goes.
type parser struct {
	budget int
	active map[*yaml.Node]bool // nodes on the current charge path
}

// Parse parses a Volcano scheduler configuration. It is strict: unknown
// fields, plugins or action configurations without a name, a missing or empty
// action list and malformed switch values are errors naming their path, e.g.
// `tiers[1].plugins[2]: unknown field "enableFoo"`. The actions string is split
// on commas and trimmed, and empty entries are dropped. Every switch is
// accepted with both the "enable" and the "enabled" prefix; giving both with
// different values is an error. Unset switches stay nil.
//
// Parse does not know which actions and plugins exist; see Validate. Errors
// describing the configuration are of type *Error.
func Parse(text []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "empty configuration"}
		}
		return nil, &Error{Msg: err.Error()}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, &Error{Msg: err.Error()}
		}
		return nil, &Error{Line: next.Line, Msg: "more than one YAML document"}
	}

	p := &parser{budget: maxNodes}
	c, err := p.config(&doc)
	if err != nil {
		return nil, err
	}
	c.raw = bytes.Clone(text)
	return c, nil
}

// resolve follows an alias and charges one node to the budget.
func (p *parser) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	p.budget--
	if p.budget < 0 {
		return nil, &Error{Path: path, Line: n.Line, Msg: "configuration too large (too many nodes after alias expansion)"}
	}
	return n, nil
}

// isNull reports whether n is an empty or null scalar.
func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// kindName describes a node's kind for error messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// field is one key/value pair of a mapping.
type field struct {
	key   string
	keyLn int
	val   *yaml.Node
}

// mapping returns the pairs of a mapping node, rejecting non-scalar and
// duplicate keys.
func (p *parser) mapping(n *yaml.Node, path string) ([]field, error) {
	if n.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: n.Line, Msg: "want a mapping, got " + kindName(n)}
	}
	fields := make([]field, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := p.resolve(n.Content[i], path)
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, &Error{Path: path, Line: k.Line, Msg: "mapping key must be a scalar, got " + kindName(k)}
		}
		if ln, dup := seen[k.Value]; dup {
			return nil, &Error{Path: path, Line: k.Line, Msg: fmt.Sprintf("duplicate field %q (first at line %d)", k.Value, ln)}
		}
		seen[k.Value] = k.Line
		v, err := p.resolve(n.Content[i+1], joinPath(path, k.Value))
		if err != nil {
			return nil, err
		}
		fields = append(fields, field{key: k.Value, keyLn: k.Line, val: v})
	}
	return fields, nil
}

// sequence returns the items of a sequence node; null counts as empty.
func (p *parser) sequence(n *yaml.Node, path string) ([]*yaml.Node, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, &Error{Path: path, Line: n.Line, Msg: "want a sequence, got " + kindName(n)}
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, it := range n.Content {
		r, err := p.resolve(it, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		items[i] = r
	}
	return items, nil
}

// str returns the value of a scalar node as a string; null gives "".
func str(n *yaml.Node, path string) (string, error) {
	if isNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", &Error{Path: path, Line: n.Line, Msg: "want a string, got " + kindName(n)}
	}
	return n.Value, nil
}

// joinPath appends a field name to a path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknownField builds the error for an unexpected mapping key.
func unknownField(path string, f field, known []string) error {
	msg := fmt.Sprintf("unknown field %q", f.key)
	if s := suggestKey(f.key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return &Error{Path: path, Line: f.keyLn, Msg: msg}
}

var (
	topKeys    = []string{"actions", "tiers", "configurations", "metrics"}
	tierKeys   = []string{"plugins"}
	actionKeys = []string{"name", "arguments"}
)

// config parses the document node.
func (p *parser) config(doc *yaml.Node) (*Config, error) {
	root := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, &Error{Msg: "empty configuration"}
		}
		root = doc.Content[0]
	}
	root, err := p.resolve(root, "")
	if err != nil {
		return nil, err
	}
	if isNull(root) {
		return nil, &Error{Line: root.Line, Msg: "empty configuration"}
	}
	fields, err := p.mapping(root, "")
	if err != nil {
		return nil, err
	}
	c := &Config{}
	haveActions := false
	for _, f := range fields {
		switch f.key {
		case "actions":
			haveActions = true
			s, err := str(f.val, "actions")
			if err != nil {
				return nil, err
			}
			c.Actions = splitActions(s)
			if len(c.Actions) == 0 {
				return nil, &Error{Path: "actions", Line: f.val.Line, Msg: "no actions given"}
			}
		case "tiers":
			items, err := p.sequence(f.val, "tiers")
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				t, err := p.tier(it, fmt.Sprintf("tiers[%d]", i))
				if err != nil {
					return nil, err
				}
				c.Tiers = append(c.Tiers, t)
			}
		case "configurations":
			items, err := p.sequence(f.val, "configurations")
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				ac, err := p.actionConfiguration(it, fmt.Sprintf("configurations[%d]", i))
				if err != nil {
					return nil, err
				}
				c.Configurations = append(c.Configurations, ac)
			}
		case "metrics":
			m, err := p.metrics(f.val, "metrics")
			if err != nil {
				return nil, err
			}
			c.MetricsConfiguration = m
		default:
			return nil, unknownField("", f, topKeys)
		}
	}
	if !haveActions {
		return nil, &Error{Path: "actions", Line: root.Line, Msg: "missing; at least one action is required"}
	}
	return c, nil
}

// splitActions splits Volcano's comma-separated actions string, trimming each
// entry and dropping empty ones.
func splitActions(s string) []string {
	var out []string
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// tier parses one entry of "tiers".
func (p *parser) tier(n *yaml.Node, path string) (Tier, error) {
	var t Tier
	fields, err := p.mapping(n, path)
	if err != nil {
		return t, err
	}
	for _, f := range fields {
		if f.key != "plugins" {
			return t, unknownField(path, f, tierKeys)
		}
		items, err := p.sequence(f.val, path+".plugins")
		if err != nil {
			return t, err
		}
		for i, it := range items {
			po, err := p.plugin(it, fmt.Sprintf("%s.plugins[%d]", path, i))
			if err != nil {
				return t, err
			}
			t.Plugins = append(t.Plugins, po)
		}
	}
	return t, nil
}

// plugin parses one plugin option.
func (p *parser) plugin(n *yaml.Node, path string) (PluginOption, error) {
	var po PluginOption
	fields, err := p.mapping(n, path)
	if err != nil {
		return po, err
	}
	var setBy [numFlags]string // key that set each flag
	for _, f := range fields {
		switch f.key {
		case "name":
			if po.Name, err = str(f.val, path+".name"); err != nil {
				return po, err
			}
		case "arguments":
			if po.Arguments, err = p.arguments(f.val, path+".arguments"); err != nil {
				return po, err
			}
		default:
			flag, ok := lookupFlagKey(f.key)
			if !ok {
				return po, unknownField(path, f, pluginOptionKeys)
			}
			v, err := boolValue(f.val, path+"."+f.key)
			if err != nil {
				return po, err
			}
			if v == nil {
				continue
			}
			fp := po.field(flag)
			if prev := setBy[flag]; prev != "" && **fp != *v {
				return po, &Error{Path: path, Line: f.keyLn, Msg: fmt.Sprintf("%s: %v conflicts with %s: %v", f.key, *v, prev, **fp)}
			}
			setBy[flag] = f.key
			*fp = v
		}
	}
	if strings.TrimSpace(po.Name) == "" {
		return po, &Error{Path: path, Line: n.Line, Msg: "plugin has no name"}
	}
	return po, nil
}

// boolValue decodes a switch value; null gives nil. YAML 1.1 spellings such as
// "yes" and "off" are accepted, as Volcano's YAML library does.
func boolValue(n *yaml.Node, path string) (*bool, error) {
	if isNull(n) {
		return nil, nil
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		return nil, &Error{Path: path, Line: n.Line, Msg: "want a boolean, got " + kindName(n)}
	}
	return &b, nil
}

// actionConfiguration parses one entry of "configurations".
func (p *parser) actionConfiguration(n *yaml.Node, path string) (ActionConfiguration, error) {
	var ac ActionConfiguration
	fields, err := p.mapping(n, path)
	if err != nil {
		return ac, err
	}
	for _, f := range fields {
		switch f.key {
		case "name":
			if ac.Name, err = str(f.val, path+".name"); err != nil {
				return ac, err
			}
			ac.Name = strings.TrimSpace(ac.Name)
		case "arguments":
			if ac.Arguments, err = p.arguments(f.val, path+".arguments"); err != nil {
				return ac, err
			}
		default:
			return ac, unknownField(path, f, actionKeys)
		}
	}
	if ac.Name == "" {
		return ac, &Error{Path: path, Line: n.Line, Msg: "action configuration has no name"}
	}
	return ac, nil
}

// charge walks a subtree, following aliases, and charges every node to the
// budget. It stops as soon as the budget is exhausted, so it terminates even
// on self-referencing aliases.
func (p *parser) charge(n *yaml.Node, path string) error {
	n, err := p.resolve(n, path)
	if err != nil {
		return err
	}
	if p.active[n] {
		return &Error{Path: path, Line: n.Line, Msg: "alias refers to a node that contains itself"}
	}
	if len(n.Content) > 0 {
		if p.active == nil {
			p.active = make(map[*yaml.Node]bool)
		}
		p.active[n] = true
		defer delete(p.active, n)
	}
	// Volcano's YAML library leaves timestamp-like plain scalars as strings
	// when decoding into interface{}; this one would make them time.Time.
	if n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle == 0 && n.ShortTag() == "!!timestamp" {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		if err := p.charge(c, path); err != nil {
			return err
		}
	}
	return nil
}

// arguments decodes an arguments mapping; null gives nil.
func (p *parser) arguments(n *yaml.Node, path string) (Arguments, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: n.Line, Msg: "want a mapping, got " + kindName(n)}
	}
	if err := p.charge(n, path); err != nil {
		return nil, err
	}
	var args map[string]any
	if err := n.Decode(&args); err != nil {
		return nil, &Error{Path: path, Line: n.Line, Msg: yamlErrorText(err)}
	}
	if args == nil {
		args = map[string]any{}
	}
	return Arguments(args), nil
}

// metrics decodes the "metrics" mapping of strings; null gives nil.
func (p *parser) metrics(n *yaml.Node, path string) (map[string]string, error) {
	if isNull(n) {
		return nil, nil
	}
	fields, err := p.mapping(n, path)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		if m[f.key], err = str(f.val, joinPath(path, f.key)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// yamlErrorText describes a decoding error: a *yaml.TypeError's own lines, else the error.
func yamlErrorText(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return err.Error()
}

// Marshal renders the configuration as YAML in Volcano's format: actions as
// one comma-separated string and every set switch under Volcano's own key.
// Unset switches are omitted. The result parses back to an equal Config.
func (c *Config) Marshal() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, strNode(key), v)
	}
	for i, a := range c.Actions {
		if a == "" || strings.Contains(a, ",") || strings.TrimSpace(a) != a {
			return nil, &Error{Path: fmt.Sprintf("actions[%d]", i), Msg: fmt.Sprintf("invalid action name %q", a)}
		}
	}
	actions := strNode(strings.Join(c.Actions, ", "))
	actions.Style = yaml.DoubleQuotedStyle
	add(root, "actions", actions)
	if len(c.Tiers) > 0 {
		tiers := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range c.Tiers {
			plugins := &yaml.Node{Kind: yaml.SequenceNode}
			for _, po := range t.Plugins {
				pn := &yaml.Node{Kind: yaml.MappingNode}
				add(pn, "name", strNode(po.Name))
				for f := range numFlags {
					if v := po.FlagValue(f); v != nil {
						add(pn, f.Key(), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(*v)})
					}
				}
				if po.Arguments != nil {
					an, err := encodeNode(po.Arguments)
					if err != nil {
						return nil, err
					}
					add(pn, "arguments", an)
				}
				plugins.Content = append(plugins.Content, pn)
			}
			tn := &yaml.Node{Kind: yaml.MappingNode}
			add(tn, "plugins", plugins)
			tiers.Content = append(tiers.Content, tn)
		}
		add(root, "tiers", tiers)
	}
	if len(c.Configurations) > 0 {
		confs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, ac := range c.Configurations {
			an := &yaml.Node{Kind: yaml.MappingNode}
			add(an, "name", strNode(ac.Name))
			if ac.Arguments != nil {
				n, err := encodeNode(ac.Arguments)
				if err != nil {
					return nil, err
				}
				add(an, "arguments", n)
			}
			confs.Content = append(confs.Content, an)
		}
		add(root, "configurations", confs)
	}
	if c.MetricsConfiguration != nil {
		n, err := encodeNode(c.MetricsConfiguration)
		if err != nil {
			return nil, err
		}
		add(root, "metrics", n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("conf: marshal: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("conf: marshal: %w", err)
	}
	return buf.Bytes(), nil
}

// strNode returns a string scalar node; the encoder quotes it if needed.
func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// encodeNode encodes a Go value as a YAML node.
func encodeNode(v any) (n *yaml.Node, err error) {
	// The YAML encoder panics on some values (e.g. channels) instead of
	// returning an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("conf: marshal: %v", r)
		}
	}()
	n = &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return nil, fmt.Errorf("conf: marshal: %w", err)
	}
	return n, nil
}
