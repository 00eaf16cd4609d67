package service

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// Bounds of a log line (BoundedHandler).
const (
	// DefaultMaxLogValue is the longest string value, in bytes, a log line carries.
	DefaultMaxLogValue = 4096
	// maxLogAttrs is how many attributes one record carries at most.
	maxLogAttrs = 32
)

// BoundedHandler returns a handler that passes records on to h with their size bounded: the
// message and every string value (errors and fmt.Stringers included, in groups too) cut to
// maxValue bytes with a note of what was cut, and at most 32 attributes per record (an
// "attrs_dropped" count stands for the rest). A client's 20 MB configuration or a label of a
// million characters then cannot make a 20 MB log line.
func BoundedHandler(h slog.Handler, maxValue int) slog.Handler {
	if maxValue <= 0 {
		maxValue = DefaultMaxLogValue
	}
	return &boundedHandler{h: h, max: maxValue}
}

type boundedHandler struct {
	h   slog.Handler
	max int
}

func (b *boundedHandler) Enabled(ctx context.Context, l slog.Level) bool { return b.h.Enabled(ctx, l) }

func (b *boundedHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, b.clip(r.Message), r.PC)
	n, dropped := 0, 0
	r.Attrs(func(a slog.Attr) bool {
		if n >= maxLogAttrs {
			dropped++
			return true
		}
		out.AddAttrs(b.bound(a))
		n++
		return true
	})
	if dropped > 0 {
		out.AddAttrs(slog.Int("attrs_dropped", dropped))
	}
	return b.h.Handle(ctx, out)
}

func (b *boundedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	bs := make([]slog.Attr, 0, min(len(as), maxLogAttrs))
	for i, a := range as {
		if i >= maxLogAttrs {
			break
		}
		bs = append(bs, b.bound(a))
	}
	return &boundedHandler{h: b.h.WithAttrs(bs), max: b.max}
}

func (b *boundedHandler) WithGroup(name string) slog.Handler {
	return &boundedHandler{h: b.h.WithGroup(b.clip(name)), max: b.max}
}

// bound bounds one attribute's value.
func (b *boundedHandler) bound(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if len(v.String()) > b.max {
			return slog.String(a.Key, b.clip(v.String()))
		}
	case slog.KindGroup:
		g := v.Group()
		bs := make([]any, 0, min(len(g), maxLogAttrs))
		for i, ga := range g {
			if i >= maxLogAttrs {
				break
			}
			bs = append(bs, b.bound(ga))
		}
		return slog.Group(a.Key, bs...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, b.clip(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, b.clip(x.String()))
		case []byte:
			return slog.String(a.Key, b.clip(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// clip cuts s to the bound.
func (b *boundedHandler) clip(s string) string { return cut(s, b.max) }

// cut returns s if it has at most n bytes, else its first n bytes or fewer (a whole number of
// UTF-8 characters) and a note of how much was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:i], len(s)-i)
}
