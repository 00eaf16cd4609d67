package service

import (
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// DefaultMaxLogValueBytes bounds each value of a log line (LimitValues): a refused 20 MB
// configuration file, or a request's field, never makes a 20 MB line.
const DefaultMaxLogValueBytes = 1024

// maxLogAttrs is how many attributes one record (or one group) carries at most (LimitValues).
const maxLogAttrs = 32

// LimitValues returns a handler that passes records to h with their size bounded: every
// string value (of an attribute, in a group, of an error or of anything that formats itself
// as text) and the message cut to maxBytes (0: DefaultMaxLogValueBytes), marked with how much
// was cut, and at most maxLogAttrs attributes per record (an "attrs_dropped" count stands for
// the rest). It is the one handler that bounds the server's log lines.
func LimitValues(h slog.Handler, maxBytes int) slog.Handler {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxLogValueBytes
	}
	if lv, ok := h.(*valueLimiter); ok && lv.max == maxBytes {
		return lv
	}
	return &valueLimiter{h: h, max: maxBytes}
}

type valueLimiter struct {
	h   slog.Handler
	max int
}

func (v *valueLimiter) Enabled(ctx context.Context, l slog.Level) bool { return v.h.Enabled(ctx, l) }

func (v *valueLimiter) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, cut(r.Message, v.max), r.PC)
	n, dropped := 0, 0
	r.Attrs(func(a slog.Attr) bool {
		if n >= maxLogAttrs {
			dropped++
			return true
		}
		out.AddAttrs(v.attr(a))
		n++
		return true
	})
	if dropped > 0 {
		out.AddAttrs(slog.Int("attrs_dropped", dropped))
	}
	return v.h.Handle(ctx, out)
}

func (v *valueLimiter) WithAttrs(attrs []slog.Attr) slog.Handler {
	cp := make([]slog.Attr, 0, min(len(attrs), maxLogAttrs))
	for i, a := range attrs {
		if i >= maxLogAttrs {
			break
		}
		cp = append(cp, v.attr(a))
	}
	return &valueLimiter{h: v.h.WithAttrs(cp), max: v.max}
}

func (v *valueLimiter) WithGroup(name string) slog.Handler {
	return &valueLimiter{h: v.h.WithGroup(cut(name, v.max)), max: v.max}
}

// attr cuts an attribute's value.
func (v *valueLimiter) attr(a slog.Attr) slog.Attr {
	val := a.Value.Resolve()
	switch val.Kind() {
	case slog.KindString:
		return slog.String(a.Key, cut(val.String(), v.max))
	case slog.KindGroup:
		g := val.Group()
		cp := make([]any, 0, min(len(g), maxLogAttrs))
		for i, ga := range g {
			if i >= maxLogAttrs {
				break
			}
			cp = append(cp, v.attr(ga))
		}
		return slog.Group(a.Key, cp...)
	case slog.KindAny:
		switch x := val.Any().(type) {
		case error:
			return slog.String(a.Key, cut(x.Error(), v.max))
		case interface{ String() string }:
			return slog.String(a.Key, cut(x.String(), v.max))
		case []byte:
			return slog.String(a.Key, cut(string(x), v.max))
		}
	}
	return slog.Attr{Key: a.Key, Value: val}
}

// cut shortens s to at most max bytes (on a rune boundary), saying how many it left out.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…[" + itoa(len(s)-end) + " more bytes]"
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// refusedLogs bounds the log lines of calls refused for their credentials or their rate
// (UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED): a flood of bad tokens makes at
// most refusedLogRate lines a second (refusedLogBurst at once); the next line let through
// says how many were left out ("suppressed").
type refusedLogs struct {
	lim *rate.Limiter

	mu         sync.Mutex
	suppressed int
}

const (
	refusedLogRate  = 10
	refusedLogBurst = 20
)

func newRefusedLogs() *refusedLogs {
	return &refusedLogs{lim: rate.NewLimiter(refusedLogRate, refusedLogBurst)}
}

// refusedCodes are the codes of calls refused before their handler ran, whose lines an
// abuser could multiply.
var refusedCodes = map[string]bool{
	codes.Unauthenticated.String():   true,
	codes.PermissionDenied.String():  true,
	codes.ResourceExhausted.String(): true,
}

// allow reports whether a line with these logging fields may be written, and how many lines
// were suppressed before it (to add to it).
func (r *refusedLogs) allow(fields []any) (ok bool, suppressed int) {
	refused := false
	for i := 0; i+1 < len(fields); i += 2 {
		if k, _ := fields[i].(string); k == "grpc.code" {
			v, _ := fields[i+1].(string)
			refused = refusedCodes[v]
			break
		}
	}
	if !refused {
		return true, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lim.AllowN(time.Now(), 1) {
		r.suppressed++
		return false, 0
	}
	n := r.suppressed
	r.suppressed = 0
	return true, n
}
