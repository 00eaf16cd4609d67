package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"
)

// table writes aligned columns.
type table struct {
	w *tabwriter.Writer
}

func newTable(out io.Writer, header ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// writeProto prints one message as indented protojson, or as YAML.
func writeProto(out io.Writer, format string, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	return writeRaw(out, format, b)
}

// writeProtoList prints messages as a JSON array of protojson objects, or as a YAML list.
func writeProtoList[M proto.Message](out io.Writer, format string, items []M) error {
	raw := make([]json.RawMessage, 0, len(items))
	for _, m := range items {
		b, err := protojson.Marshal(m)
		if err != nil {
			return err
		}
		raw = append(raw, b)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return writeRaw(out, format, b)
}

// writeValue prints a plain Go value (encoding/json) as JSON or YAML.
func writeValue(out io.Writer, format string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRaw(out, format, b)
}

// writeRaw prints JSON text indented, or converted to YAML (keys in the same order).
func writeRaw(out io.Writer, format string, b []byte) error {
	if format == "yaml" {
		y, err := jsonToYAML(b)
		if err != nil {
			return err
		}
		_, err = out.Write(y)
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := out.Write(buf.Bytes())
	return err
}

// jsonToYAML converts JSON text to block-style YAML.
func jsonToYAML(b []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style &^= yaml.FlowStyle | yaml.DoubleQuotedStyle
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// resourceOrder puts the common resources first, the rest by name.
var resourceOrder = map[string]int{"cpu": 0, "memory": 1, "pods": 2}

// fmtResources formats a resource list as "cpu=4,memory=16Gi,...".
func fmtResources(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := resourceOrder[keys[i]]
		oj, jok := resourceOrder[keys[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// fmtLabels formats labels as "k=v,..." in key order, leaving out skip.
func fmtLabels(m map[string]string, skip func(k, v string) bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if skip != nil && skip(k, m[k]) {
			continue
		}
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// enumName turns "TASK_STATUS_RUNNING" into "Running" given the prefix
// "TASK_STATUS_".
func enumName(s, prefix string) string {
	s = strings.TrimPrefix(s, prefix)
	words := strings.Split(strings.ToLower(s), "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, "")
}
