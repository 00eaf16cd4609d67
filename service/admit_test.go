package service

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestFailedLoginsPassTheLimiter: calls with a wrong token are charged to their peer address:
// past the burst they are RESOURCE_EXHAUSTED, however fast they come, while a valid token
// from the same address keeps its own bucket.
func TestFailedLoginsPassTheLimiter(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, func(o *Options) { o.RateLimit, o.RateBurst = 0.001, 5 }))
	ctx := ctxT(t)
	h.mustExist("east")
	counts := map[codes.Code]int{}
	for i := range 50 {
		tok := fmt.Sprintf("guess-%d", i)
		if i%10 == 0 {
			tok = "" // no token at all counts alike
		}
		_, err := h.cs.ListNodes(withToken(ctx, tok), &sluicev1.ListNodesRequest{Cluster: "east"})
		counts[status.Code(err)]++
		if status.Code(err) == codes.ResourceExhausted {
			wantReason(t, err, codes.ResourceExhausted, ReasonRateLimited)
		}
	}
	if counts[codes.Unauthenticated] != 5 || counts[codes.ResourceExhausted] != 45 {
		t.Fatalf("50 failed logins: %v, want 5 UNAUTHENTICATED and 45 RESOURCE_EXHAUSTED", counts)
	}
	// Streams too.
	_, err := h.sc.WatchPlans(withToken(ctx, "guess"), &sluicev1.WatchPlansRequest{Cluster: "east"})
	if err == nil {
		s, _ := h.sc.WatchPlans(withToken(ctx, "guess"), &sluicev1.WatchPlansRequest{Cluster: "east"})
		_, err = s.Recv()
	}
	wantReason(t, err, codes.ResourceExhausted, ReasonRateLimited)
	if _, err := h.cs.ListNodes(withToken(ctx, "tok-east"), &sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
		t.Fatalf("a valid token from the same address: %v", err)
	}
}

// TestRefusedCallsLogLittle: a flood of wrong tokens writes a bounded number of log lines,
// and the next line let through says how many were left out; other calls log as before.
func TestRefusedCallsLogLittle(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	h.mustExist("east")
	for i := range 300 {
		_, err := h.cs.ListNodes(withToken(ctx, fmt.Sprintf("guess-%d", i)), &sluicev1.ListNodesRequest{Cluster: "east"})
		wantCode(t, err, codes.Unauthenticated)
	}
	refused := func() int { return strings.Count(h.logs.String(), `"grpc.code":"Unauthenticated"`) }
	if n := refused(); n < refusedLogBurst || n > refusedLogBurst+20 {
		t.Fatalf("300 refused calls wrote %d log lines, want about %d", n, refusedLogBurst)
	}
	for range 20 {
		if _, err := h.cs.ListNodes(withToken(ctx, "tok-east"), &sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(h.logs.String(), `"client":"east-rw"`); n != 20 {
		t.Fatalf("20 accepted calls wrote %d log lines", n)
	}
	time.Sleep(200 * time.Millisecond) // a token or two comes back
	_, _ = h.cs.ListNodes(withToken(ctx, "guess"), &sluicev1.ListNodesRequest{Cluster: "east"})
	if !strings.Contains(h.logs.String(), `"suppressed":`) {
		t.Fatal("no log line says how many refused calls were not logged")
	}
}

func TestLogValuesAreCut(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LimitValues(slog.NewJSONHandler(&buf, nil), 100))
	big := strings.Repeat("x", 20_000_000)
	log.Error("refused "+big, "reason", big, "error", errors.New(big), "bytes", []byte(big),
		slog.Group("g", "inner", big), "n", 7)
	log.With("ctx", big).Info("ok")
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if len(line) > 1000 {
			t.Fatalf("line %d is %d bytes long", i, len(line))
		}
		if !strings.Contains(line, "more bytes]") {
			t.Fatalf("line %d does not say what was cut: %s", i, line)
		}
	}
	if !strings.Contains(buf.String(), `"n":7`) {
		t.Fatal("a short value was lost")
	}
	if got := cut("é"+strings.Repeat("a", 10), 1); got != "…[12 more bytes]" {
		t.Fatalf("cut in the middle of a rune: %q", got)
	}
}

// TestSetAuthenticator: a new tokens file applies to the calls that start after it; an open
// stream keeps going; a server without authentication gets none.
func TestSetAuthenticator(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	east := h.withToken("tok-east")
	smallCluster(east, "east")
	w := east.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun, Period: durationpb.New(200 * time.Millisecond)})
	w.next()
	entries, err := ParseTokens([]byte("- {name: next, token: tok-next, clusters: [east]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(entries, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.srv.SetAuthenticator(a); err != nil {
		t.Fatal(err)
	}
	_, err = east.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unauthenticated)
	next := h.withToken("tok-next")
	if _, err := next.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
		t.Fatalf("the new token: %v", err)
	}
	// The stream opened before goes on: a change (watches are idle-free) brings its next plan.
	next.apply("east", node("n9", cpu("1")))
	w.next()
	if err := h.srv.SetAuthenticator(nil); err == nil {
		t.Fatal("a nil authenticator was accepted")
	}
	plain := newHarness(t)
	if err := plain.srv.SetAuthenticator(a); err == nil {
		t.Fatal("a server without authentication was given some")
	}
}
