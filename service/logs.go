package service

import (
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// DefaultMaxLogValueBytes bounds each value of a log line (LimitValues): a refused 20 MB
// configuration file, or a request's field, never makes a 20 MB line.
const DefaultMaxLogValueBytes = 1024

// LimitValues returns a handler that passes records to h with every string value (of an
// attribute, in a group, of an error or of anything that formats itself as text) and the
// message cut to maxBytes (0: DefaultMaxLogValueBytes), marked with how much was cut.
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
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(v.attr(a))
		return true
	})
	return v.h.Handle(ctx, out)
}

func (v *valueLimiter) WithAttrs(attrs []slog.Attr) slog.Handler {
	cp := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		cp[i] = v.attr(a)
	}
	return &valueLimiter{h: v.h.WithAttrs(cp), max: v.max}
}

func (v *valueLimiter) WithGroup(name string) slog.Handler {
	return &valueLimiter{h: v.h.WithGroup(name), max: v.max}
}

// attr cuts an attribute's value.
func (v *valueLimiter) attr(a slog.Attr) slog.Attr {
	val := a.Value.Resolve()
	switch val.Kind() {
	case slog.KindString:
		return slog.String(a.Key, cut(val.String(), v.max))
	case slog.KindGroup:
		g := val.Group()
		cp := make([]any, len(g))
		for i, ga := range g {
			cp[i] = v.attr(ga)
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

// slogAdapter makes the server's logger a go-grpc-middleware logger whose lines of refused
// calls are rate-limited (refusedLogs).
func (s *Server) slogAdapter() logging.Logger {
	refused := newRefusedLogs()
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		ok, suppressed := refused.allow(fields)
		if !ok {
			return
		}
		if suppressed > 0 {
			fields = append(fields, "suppressed", suppressed)
		}
		s.log.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}
