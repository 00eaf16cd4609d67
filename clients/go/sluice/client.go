package sluice

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/vtcodec"
)

// Client is a connection to a Sluice server. It is safe for concurrent use.
//
// Against a replicated server (several sluiced with --raft-peers) the Client follows the
// leader: a call a follower refuses with UNAVAILABLE and the NOT_LEADER reason is sent again
// to the leader it names, and later calls and streams go there too; when the member in use
// is unreachable, or answers UNAVAILABLE with the STORE_UNAVAILABLE or STALE_READ_REFUSED
// reason (it knows no leader, or is too far behind), later calls try the next address given
// with WithEndpoints.
type Client struct {
	lc *leaderConn
	// State is the raw ClusterStateService stub.
	State sluicev1.ClusterStateServiceClient
	// Scheduler is the raw SchedulerService stub.
	Scheduler sluicev1.SchedulerServiceClient
}

// Option configures Dial.
type Option func(*dialOptions)

type dialOptions struct {
	tls       *tls.Config
	plaintext bool
	token     string
	perRPC    credentials.PerRPCCredentials
	extra     []grpc.DialOption
	endpoints []string
}

// WithEndpoints lists the other members of a replicated server (host:port of their gRPC
// API): when the member in use cannot be reached, later calls try the next one. Leaders are
// found from the members' answers either way.
func WithEndpoints(addrs ...string) Option {
	return func(o *dialOptions) { o.endpoints = append(o.endpoints, addrs...) }
}

// WithTLSConfig connects over TLS with cfg (server roots, client certificates for
// mTLS, server name). Without any transport option Dial uses TLS with the system's
// roots.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(o *dialOptions) { o.tls = cfg }
}

// WithInsecure connects in plaintext, without TLS. Use it only on a trusted network
// (loopback, a pod's sidecar). A bearer token is then sent in the clear.
func WithInsecure() Option {
	return func(o *dialOptions) { o.plaintext = true }
}

// WithBearerToken sends "authorization: Bearer TOKEN" with every call. It requires
// TLS unless WithInsecure is given too.
func WithBearerToken(token string) Option {
	return func(o *dialOptions) { o.token = token }
}

// WithPerRPCCredentials sends the metadata of creds with every call, for tokens that
// change over time (credentials/oauth, a file that is rotated, ...).
func WithPerRPCCredentials(creds credentials.PerRPCCredentials) Option {
	return func(o *dialOptions) { o.perRPC = creds }
}

// WithDialOptions appends raw gRPC dial options (interceptors, a custom dialer,
// message size limits, ...).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *dialOptions) { o.extra = append(o.extra, opts...) }
}

// TLSConfigFromFiles builds a TLS configuration: caFile (PEM) holds the roots that
// sign the server's certificate (empty means the system's roots); certFile and
// keyFile (PEM, both or neither) are the client's certificate for mTLS.
func TLSConfigFromFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("sluice: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sluice: CA file %s: no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("sluice: a client certificate needs both certFile and keyFile")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("sluice: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Dial returns a client for the server at target ("host:port", or any gRPC target
// such as "dns:///sluice.example:50051"). It does not wait for the connection: the
// first call does, and a server that is down makes calls fail with UNAVAILABLE.
func Dial(target string, opts ...Option) (*Client, error) {
	var o dialOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.plaintext && o.tls != nil {
		return nil, errors.New("sluice: WithInsecure and WithTLSConfig are exclusive")
	}
	var dopts []grpc.DialOption
	if o.plaintext {
		dopts = append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		cfg := o.tls
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		dopts = append(dopts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	if o.token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearerToken{token: o.token, requireTLS: !o.plaintext}))
	}
	if o.perRPC != nil {
		dopts = append(dopts, grpc.WithPerRPCCredentials(o.perRPC))
	}
	// Sluice's codec (reflection-free encoding of its messages) first, so that extra options
	// may replace it.
	dopts = append(dopts, vtcodec.DialOption())
	dopts = append(dopts, o.extra...)
	dial := func(t string) (*grpc.ClientConn, error) { return grpc.NewClient(t, dopts...) }
	conn, err := dial(target)
	if err != nil {
		return nil, fmt.Errorf("sluice: %w", err)
	}
	return newClient(newLeaderConn(target, conn, dial, o.endpoints)), nil
}

// NewClient wraps an existing connection. Close closes it. Such a Client cannot dial other
// members, so it does not follow a replicated server's leader (use Dial for that).
func NewClient(conn *grpc.ClientConn) *Client {
	return newClient(newLeaderConn(conn.Target(), conn, nil, nil))
}

func newClient(lc *leaderConn) *Client {
	return &Client{
		lc:        lc,
		State:     sluicev1.NewClusterStateServiceClient(lc),
		Scheduler: sluicev1.NewSchedulerServiceClient(lc),
	}
}

// Conn returns the connection calls go to now (the leader's, once found).
func (c *Client) Conn() *grpc.ClientConn { return c.lc.current() }

// Close closes the connections.
func (c *Client) Close() error { return c.lc.close() }

// bearerToken sends a static token as "authorization: Bearer ...".
type bearerToken struct {
	token      string
	requireTLS bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearerToken) RequireTransportSecurity() bool { return b.requireTLS }

// Apply applies one batch of deltas atomically (ApplyDeltas) and returns the
// cluster's revision after it. With replaceAll the cluster becomes exactly deltas.
func (c *Client) Apply(ctx context.Context, cluster string, replaceAll bool, deltas ...*sluicev1.Delta) (uint64, error) {
	resp, err := c.State.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{
		Cluster: cluster,
		Batch:   &sluicev1.DeltaBatch{Deltas: deltas, ReplaceAll: replaceAll},
	})
	if err != nil {
		return 0, err
	}
	return resp.GetRevision(), nil
}

// Schedule runs one cycle in mode and returns its whole plan: the response holds the first
// page of the decisions and job outcomes, and Schedule reads the others through GetPlan.
func (c *Client) Schedule(ctx context.Context, cluster string, mode sluicev1.ScheduleMode) (*sluicev1.Plan, error) {
	resp, err := c.Scheduler.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: cluster, Mode: mode})
	if err != nil {
		return nil, err
	}
	return c.RestOfPlan(ctx, resp.GetPlan(), resp.GetNextPageToken())
}

// GetPlan returns a plan with all its decisions and job outcomes (a committed plan's
// decisions carry their outcomes), reading it page by page.
func (c *Client) GetPlan(ctx context.Context, cluster, planID string) (*sluicev1.Plan, error) {
	resp, err := c.Scheduler.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: cluster, PlanId: planID})
	if err != nil {
		return nil, err
	}
	return c.RestOfPlan(ctx, resp.GetPlan(), resp.GetNextPageToken())
}

// RestOfPlan completes a plan's first page (from Schedule, CommitPlan, WatchPlans or GetPlan)
// with the pages that token and the tokens after it name (see WholePlan).
func (c *Client) RestOfPlan(ctx context.Context, first *sluicev1.Plan, token string) (*sluicev1.Plan, error) {
	return WholePlan(ctx, c.Scheduler, first, token)
}

// WholePlan completes a plan's first page with the pages that token and the tokens after it
// name, read through GetPlan. It returns first itself when token is empty, else a new plan;
// first is left as it is.
func WholePlan(ctx context.Context, sc sluicev1.SchedulerServiceClient, first *sluicev1.Plan, token string) (*sluicev1.Plan, error) {
	if token == "" {
		return first, nil
	}
	whole := proto.Clone(first).(*sluicev1.Plan)
	size := int32(max(len(first.GetDecisions()), len(first.GetJobs())))
	for token != "" {
		resp, err := sc.GetPlan(ctx, &sluicev1.GetPlanRequest{
			Cluster: first.GetCluster(), PlanId: first.GetId(), PageSize: size, PageToken: token,
		})
		if err != nil {
			return nil, err
		}
		whole.Decisions = append(whole.Decisions, resp.GetPlan().GetDecisions()...)
		whole.Jobs = append(whole.Jobs, resp.GetPlan().GetJobs()...)
		token = resp.GetNextPageToken()
	}
	return whole, nil
}

// Commit commits a proposed plan. Committing a committed plan again answers the same (so a
// commit whose answer was lost may be retried). The response holds the first page of the
// committed plan; its Applied and Rejected lists cover that page (GetPlan, or the scheduling
// loop, gives every decision with its outcome).
func (c *Client) Commit(ctx context.Context, cluster, planID string) (*sluicev1.CommitPlanResponse, error) {
	return c.Scheduler.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: cluster, PlanId: planID})
}

// Discard drops a proposed plan.
func (c *Client) Discard(ctx context.Context, cluster, planID string) error {
	_, err := c.Scheduler.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: cluster, PlanId: planID})
	return err
}

// Explain returns a job's outcome in the most recent cycle that considered it.
// An empty namespace means "default".
func (c *Client) Explain(ctx context.Context, cluster, namespace, job string) (*sluicev1.ExplainJobResponse, error) {
	return c.Scheduler.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: cluster, Namespace: namespace, Name: job})
}

// Clusters returns every cluster the client's credentials cover (ListClusters, page after
// page), ordered by name.
func (c *Client) Clusters(ctx context.Context) ([]*sluicev1.Cluster, error) {
	var out []*sluicev1.Cluster
	req := &sluicev1.ListClustersRequest{PageSize: 1000}
	for {
		resp, err := c.State.ListClusters(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetClusters()...)
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req = &sluicev1.ListClustersRequest{PageSize: req.GetPageSize(), PageToken: resp.GetNextPageToken()}
	}
}

// Cluster returns a cluster's revision, object counts and configuration etag. A cluster that
// does not exist fails with NOT_FOUND (reason CLUSTER_NOT_FOUND).
func (c *Client) Cluster(ctx context.Context, cluster string) (*sluicev1.Cluster, error) {
	resp, err := c.State.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: cluster})
	if err != nil {
		return nil, err
	}
	return resp.GetCluster(), nil
}

// DeleteCluster deletes a cluster and everything of it (objects, plans, configuration,
// revision, metrics) and returns it as it was. It needs an admin token.
func (c *Client) DeleteCluster(ctx context.Context, cluster string) (*sluicev1.Cluster, error) {
	resp, err := c.State.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: cluster})
	if err != nil {
		return nil, err
	}
	return resp.GetCluster(), nil
}

// Config returns a cluster's scheduler configuration (Volcano YAML) and its etag. It needs an
// admin token.
func (c *Client) Config(ctx context.Context, cluster string) (config, etag string, err error) {
	resp, err := c.Scheduler.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: cluster})
	if err != nil {
		return "", "", err
	}
	return resp.GetConfig(), resp.GetEtag(), nil
}

// SetConfig replaces a cluster's scheduler configuration and returns the new etag. With an
// etag (from Config, Cluster or a previous SetConfig) it applies only if the configuration did
// not change since; otherwise it fails with ABORTED (reason CONFIG_ETAG_MISMATCH). An empty
// etag replaces it unconditionally. It needs an admin token.
func (c *Client) SetConfig(ctx context.Context, cluster, config, etag string) (string, error) {
	resp, err := c.Scheduler.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: cluster, Config: config, Etag: etag})
	if err != nil {
		return "", err
	}
	return resp.GetEtag(), nil
}
