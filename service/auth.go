package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"gopkg.in/yaml.v3"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Reasons of authentication and authorization failures.
const (
	// ReasonUnauthenticated: no credentials, or credentials the server does not know.
	ReasonUnauthenticated = "UNAUTHENTICATED"
	// ReasonPermissionDenied: the caller's scope does not cover the cluster or the call.
	ReasonPermissionDenied = "PERMISSION_DENIED"
)

// TokenEntry is one entry of a tokens file: a credential and what it may do.
//
// In YAML (or JSON), a file is a list of entries, or a map with a "tokens" list:
//
//	tokens:
//	  - name: rm-east             # who; shows in logs, required and unique
//	    sha256: 9f86d0...         # hex SHA-256 of the token (preferred), or
//	    # token: s3cr3t           # the token itself
//	    clusters: [east]          # clusters it may read and write; "*" means all
//	    read_only: false          # only reads (Get*, List*, GetPlan, ExplainJob, dry runs)
//	    admin: false              # may also read and replace scheduler configurations, and delete clusters
//	  - name: ops
//	    client_cn: ops.example.com  # a verified mTLS client certificate with this CN
//	    clusters: ["*"]
//	    admin: true
type TokenEntry struct {
	Name string `yaml:"name" json:"name"`
	// Token is the bearer token in clear; SHA256 is the hex SHA-256 of it. One of Token,
	// SHA256 and ClientCN is required.
	Token  string `yaml:"token,omitempty" json:"token,omitempty"`
	SHA256 string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
	// ClientCN matches a client whose verified TLS certificate has this common name (it
	// needs --client-ca).
	ClientCN string   `yaml:"client_cn,omitempty" json:"client_cn,omitempty"`
	Clusters []string `yaml:"clusters" json:"clusters"`
	Admin    bool     `yaml:"admin,omitempty" json:"admin,omitempty"`
	ReadOnly bool     `yaml:"read_only,omitempty" json:"read_only,omitempty"`
}

// LoadTokens reads a tokens file (YAML or JSON).
func LoadTokens(path string) ([]TokenEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	entries, err := ParseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// ParseTokens parses and checks the text of a tokens file.
func ParseTokens(data []byte) ([]TokenEntry, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, errors.New("no tokens: the file is empty")
	}
	doc := root.Content[0]
	if doc.Kind == yaml.MappingNode {
		var list *yaml.Node
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value != "tokens" {
				return nil, fmt.Errorf("line %d: unknown key %q (expected a list of tokens, or a map with a \"tokens\" list)",
					doc.Content[i].Line, doc.Content[i].Value)
			}
			list = doc.Content[i+1]
		}
		if list == nil {
			return nil, errors.New(`no tokens: expected a list of tokens, or a map with a "tokens" list`)
		}
		doc = list
	}
	if doc.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: expected a list of tokens", doc.Line)
	}
	// Decode strictly, so that a misspelt key ("cluster", "readonly") is an error rather
	// than a silently wider or narrower scope.
	text, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	var entries []TokenEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errors.New("no tokens: the list is empty")
	}
	names := map[string]int{}
	sums := map[[32]byte]int{}
	for i, e := range entries {
		where := fmt.Sprintf("tokens[%d]", i)
		if e.Name != "" {
			where += fmt.Sprintf(" (%s)", e.Name)
		}
		n := 0
		for _, s := range []string{e.Token, e.SHA256, e.ClientCN} {
			if s != "" {
				n++
			}
		}
		switch {
		case strings.TrimSpace(e.Name) == "":
			return nil, fmt.Errorf("%s: name is required", where)
		case n != 1:
			return nil, fmt.Errorf("%s: give exactly one of token, sha256 and client_cn", where)
		case len(e.Clusters) == 0:
			return nil, fmt.Errorf(`%s: clusters is required: list the cluster names, or ["*"] for every cluster`, where)
		}
		for _, v := range []struct{ field, value string }{{"name", e.Name}, {"client_cn", e.ClientCN}} {
			// Names show in logs: none may pass for another.
			if at, r, bad := hiddenRune(v.value); bad {
				return nil, fmt.Errorf("%s: %s holds %s (%U at byte %d)", where, v.field, hiddenKind(r), r, at)
			}
		}
		if j, dup := names[e.Name]; dup {
			return nil, fmt.Errorf("%s: name %q is used by tokens[%d] too", where, e.Name, j)
		}
		names[e.Name] = i
		for _, c := range e.Clusters {
			if c != "*" && !clusterName.MatchString(c) {
				return nil, fmt.Errorf("%s: invalid cluster name %q", where, c)
			}
		}
		if e.SHA256 != "" || e.Token != "" {
			sum, err := entrySum(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if j, dup := sums[sum]; dup {
				return nil, fmt.Errorf("%s: the same token as tokens[%d]", where, j)
			}
			sums[sum] = i
		}
	}
	return entries, nil
}

// entrySum returns the SHA-256 of an entry's token.
func entrySum(e TokenEntry) ([32]byte, error) {
	var sum [32]byte
	if e.Token != "" {
		return sha256.Sum256([]byte(e.Token)), nil
	}
	h := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e.SHA256), "sha256:"))
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(sum) {
		return sum, errors.New("sha256 must be 64 hexadecimal digits (the output of sha256sum)")
	}
	copy(sum[:], b)
	return sum, nil
}

// Identity is an authenticated caller and its scope.
type Identity struct {
	// Name is the token entry's name, or "cert:CN" for a client certificate accepted
	// without a tokens file.
	Name     string
	Clusters []string
	Admin    bool
	ReadOnly bool
}

// mayAccess reports whether the identity's scope covers a cluster.
func (id *Identity) mayAccess(cluster string) bool {
	return slices.Contains(id.Clusters, "*") || slices.Contains(id.Clusters, cluster)
}

type identityKey struct{}

// IdentityFrom returns the caller's identity, or nil when the server does not authenticate
// (or the method is open, like health and reflection).
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// Authenticator checks bearer tokens and client certificates. Tokens are kept as SHA-256
// sums and compared in constant time, every entry each time.
type Authenticator struct {
	tokens []authEntry
	certs  map[string]*Identity
	// anyCert accepts every verified client certificate with full access (mTLS without a
	// tokens file).
	anyCert bool
}

type authEntry struct {
	sum [32]byte
	id  *Identity
}

// NewAuthenticator returns an authenticator for the entries of a tokens file. With
// anyClientCert, a client with a verified certificate (the TLS config's ClientCAs) that no
// entry names is accepted with access to every cluster, as an admin.
func NewAuthenticator(entries []TokenEntry, anyClientCert bool) (*Authenticator, error) {
	a := &Authenticator{certs: map[string]*Identity{}, anyCert: anyClientCert}
	for _, e := range entries {
		id := &Identity{Name: e.Name, Clusters: slices.Clone(e.Clusters), Admin: e.Admin, ReadOnly: e.ReadOnly}
		if e.ClientCN != "" {
			a.certs[e.ClientCN] = id
			continue
		}
		sum, err := entrySum(e)
		if err != nil {
			return nil, fmt.Errorf("token %s: %w", e.Name, err)
		}
		a.tokens = append(a.tokens, authEntry{sum: sum, id: id})
	}
	if len(a.tokens) == 0 && len(a.certs) == 0 && !anyClientCert {
		return nil, errors.New("no credentials: give tokens or accept client certificates")
	}
	return a, nil
}

// Authenticate returns the caller's identity: from the bearer token of the call's
// "authorization" metadata if there is one, else from its verified client certificate.
func (a *Authenticator) Authenticate(ctx context.Context) (*Identity, error) {
	token, present, err := bearerToken(ctx)
	if err != nil {
		return nil, err
	}
	if present {
		if id := a.byToken(token); id != nil {
			return id, nil
		}
		return nil, withInfo(codes.Unauthenticated, ReasonUnauthenticated,
			"invalid bearer token: it matches no entry of the server's tokens file")
	}
	if cn, ok := verifiedClientCN(ctx); ok {
		if id, ok := a.certs[cn]; ok {
			return id, nil
		}
		if a.anyCert {
			return &Identity{Name: "cert:" + cn, Clusters: []string{"*"}, Admin: true}, nil
		}
		return nil, withInfo(codes.Unauthenticated, ReasonUnauthenticated, fmt.Sprintf(
			"client certificate CN=%q is not in the server's tokens file: send a bearer token", cn))
	}
	if len(a.tokens) == 0 {
		return nil, withInfo(codes.Unauthenticated, ReasonUnauthenticated,
			"missing credentials: present a client certificate signed by the server's client CA")
	}
	return nil, withInfo(codes.Unauthenticated, ReasonUnauthenticated,
		`missing credentials: send the metadata "authorization: Bearer TOKEN"`)
}

// byToken finds a token's entry, comparing its sum with every entry in constant time.
func (a *Authenticator) byToken(token string) *Identity {
	sum := sha256.Sum256([]byte(token))
	var found *Identity
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].sum[:]) == 1 {
			found = a.tokens[i].id
		}
	}
	return found
}

// bearerToken returns the token of the call's "authorization: Bearer TOKEN" metadata.
func bearerToken(ctx context.Context) (token string, present bool, err error) {
	vals := metadata.ValueFromIncomingContext(ctx, "authorization")
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", false, withInfo(codes.Unauthenticated, ReasonUnauthenticated, "more than one authorization header")
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) == "" {
		return "", false, withInfo(codes.Unauthenticated, ReasonUnauthenticated,
			`malformed authorization header: expected "Bearer TOKEN"`)
	}
	return strings.TrimSpace(tok), true, nil
}

// verifiedClientCN returns the common name of the call's verified client certificate.
func verifiedClientCN(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return "", false
	}
	return info.State.VerifiedChains[0][0].Subject.CommonName, true
}

// methodPolicy says what a method needs besides a cluster in the caller's scope.
type methodPolicy struct {
	// write: not for read-only identities.
	write bool
	// dryRunReads: a request whose mode is SCHEDULE_MODE_DRY_RUN only reads.
	dryRunReads bool
	// admin: only for admin identities.
	admin bool
	// allClusters: the request names no cluster but reads several; the handler answers only
	// with the clusters the caller's scope covers (callerScope).
	allClusters bool
}

// methodPolicies covers every method of both services; a method missing here is refused to
// every caller (a test walks the service descriptors to keep it complete).
var methodPolicies = map[string]methodPolicy{
	sluicev1.ClusterStateService_Sync_FullMethodName:         {write: true},
	sluicev1.ClusterStateService_ApplyDeltas_FullMethodName:  {write: true},
	sluicev1.ClusterStateService_GetNode_FullMethodName:      {},
	sluicev1.ClusterStateService_ListNodes_FullMethodName:    {},
	sluicev1.ClusterStateService_GetQueue_FullMethodName:     {},
	sluicev1.ClusterStateService_ListQueues_FullMethodName:   {},
	sluicev1.ClusterStateService_GetJob_FullMethodName:       {},
	sluicev1.ClusterStateService_ListJobs_FullMethodName:     {},
	sluicev1.ClusterStateService_GetTask_FullMethodName:      {},
	sluicev1.ClusterStateService_ListTasks_FullMethodName:    {},
	sluicev1.ClusterStateService_ListClusters_FullMethodName: {allClusters: true},
	sluicev1.ClusterStateService_GetCluster_FullMethodName:   {},
	// Deleting a cluster deletes its scheduler configuration too, which only admins may
	// change.
	sluicev1.ClusterStateService_DeleteCluster_FullMethodName: {admin: true, write: true},

	sluicev1.SchedulerService_Schedule_FullMethodName:              {write: true, dryRunReads: true},
	sluicev1.SchedulerService_CommitPlan_FullMethodName:            {write: true},
	sluicev1.SchedulerService_DiscardPlan_FullMethodName:           {write: true},
	sluicev1.SchedulerService_ExplainJob_FullMethodName:            {},
	sluicev1.SchedulerService_GetPlan_FullMethodName:               {},
	sluicev1.SchedulerService_WatchPlans_FullMethodName:            {write: true, dryRunReads: true},
	sluicev1.SchedulerService_GetSchedulerConfig_FullMethodName:    {admin: true},
	sluicev1.SchedulerService_UpdateSchedulerConfig_FullMethodName: {admin: true, write: true},
}

// openMethod reports whether a method needs no credentials: health checks and reflection.
func openMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1alpha.ServerReflection/")
}

// authorize checks that id may make a call of method with message m (a unary request, or
// each message a stream receives). Messages that carry no cluster (Sync batches, bound to
// the hello's cluster) are checked only for the method; an empty cluster is left to the
// request's validation.
func authorize(id *Identity, method string, m any) error {
	pol, ok := methodPolicies[method]
	if !ok {
		return withInfo(codes.PermissionDenied, ReasonPermissionDenied, fmt.Sprintf("%s is not open to any token", method))
	}
	if pol.admin && !id.Admin {
		return withInfo(codes.PermissionDenied, ReasonPermissionDenied, fmt.Sprintf(
			"%s needs an admin token; %q is not one", shortMethod(method), id.Name))
	}
	write := pol.write
	if mm, ok := m.(interface{ GetMode() sluicev1.ScheduleMode }); ok && pol.dryRunReads &&
		mm.GetMode() == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		write = false
	}
	if write && id.ReadOnly {
		return withInfo(codes.PermissionDenied, ReasonPermissionDenied, fmt.Sprintf(
			"%s writes, and token %q is read-only", shortMethod(method), id.Name))
	}
	cluster, ok := clusterOf(m)
	if ok && cluster != "" && !id.mayAccess(cluster) {
		return withInfo(codes.PermissionDenied, ReasonPermissionDenied, fmt.Sprintf(
			"token %q may not access cluster %q", id.Name, cluster))
	}
	return nil
}

// callerScope returns a test of the clusters the call's caller may access: every cluster when
// the server does not authenticate.
func callerScope(ctx context.Context) func(cluster string) bool {
	id := IdentityFrom(ctx)
	if id == nil {
		return func(string) bool { return true }
	}
	return id.mayAccess
}

// clusterOf returns the cluster a request message names.
func clusterOf(m any) (string, bool) {
	switch r := m.(type) {
	case interface{ GetCluster() string }:
		return r.GetCluster(), true
	case *sluicev1.SyncRequest:
		if h := r.GetHello(); h != nil {
			return h.GetCluster(), true
		}
	}
	return "", false
}

func shortMethod(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[i+1:]
	}
	return full
}

// admitUnary admits a unary call (admit) and authorizes it.
func (s *Server) admitUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if openMethod(info.FullMethod) {
		return next(ctx, req)
	}
	id, err := s.admit(ctx)
	if err != nil || id == nil {
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
	if _, ok := clusterOf(req); !ok && !methodPolicies[info.FullMethod].allClusters {
		// Fail closed: a unary request that names no cluster cannot be scoped, unless its
		// handler scopes its answer.
		return nil, withInfo(codes.PermissionDenied, ReasonPermissionDenied, fmt.Sprintf(
			"%s names no cluster, so no token's scope covers it", shortMethod(info.FullMethod)))
	}
	if err := authorize(id, info.FullMethod, req); err != nil {
		return nil, err
	}
	return next(context.WithValue(ctx, identityKey{}, id), req)
}

// admitStream admits a streaming call (admit; a stream counts once) and authorizes each
// message it receives.
func (s *Server) admitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if openMethod(info.FullMethod) {
		return next(srv, ss)
	}
	ctx := ss.Context()
	id, err := s.admit(ctx)
	if err != nil || id == nil {
		if err != nil {
			return err
		}
		return next(srv, ss)
	}
	if _, ok := methodPolicies[info.FullMethod]; !ok {
		return authorize(id, info.FullMethod, nil)
	}
	return next(srv, &authorizedStream{ServerStream: ss, ctx: context.WithValue(ctx, identityKey{}, id), id: id, method: info.FullMethod})
}

// authorizedStream checks every message it receives against the caller's scope.
type authorizedStream struct {
	grpc.ServerStream
	ctx    context.Context
	id     *Identity
	method string
}

func (s *authorizedStream) Context() context.Context { return s.ctx }

func (s *authorizedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return authorize(s.id, s.method, m)
}
