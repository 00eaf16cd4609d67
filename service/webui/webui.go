package webui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// Path is where the UI is mounted on the admin listener.
const Path = "/ui/"

// CookieName is the cookie that keeps the token given in the login form.
const CookieName = "sluice_token"

// cookieLifetime is how long the login cookie lasts.
const cookieLifetime = 12 * time.Hour

// DefaultRefresh is how often pages refresh their live part.
const DefaultRefresh = 5 * time.Second

//go:embed templates/*.html static/*
var assets embed.FS

// Source is what the UI reads through: the service's read paths (service.UIReads implements
// it). Every method checks the identity's scope; errors are gRPC status errors.
type Source interface {
	// Authenticates reports whether the server asks for credentials.
	Authenticates() bool
	// Admit authenticates a request (token, else its Authorization header or client
	// certificate) and charges it to its rate limit; nil without authentication.
	Admit(r *http.Request, token string) (*service.Identity, error)
	ListClusters(ctx context.Context, id *service.Identity, req *sluicev1.ListClustersRequest) (*sluicev1.ListClustersResponse, error)
	Summary(ctx context.Context, id *service.Identity, cluster string) (*service.ClusterSummary, error)
	ListQueues(ctx context.Context, id *service.Identity, req *sluicev1.ListQueuesRequest) (*sluicev1.ListQueuesResponse, error)
	Jobs(ctx context.Context, id *service.Identity, q service.JobQuery) ([]service.JobRow, string, error)
	GetJob(ctx context.Context, id *service.Identity, req *sluicev1.GetJobRequest) (*sluicev1.GetJobResponse, error)
	ListTasks(ctx context.Context, id *service.Identity, req *sluicev1.ListTasksRequest) (*sluicev1.ListTasksResponse, error)
	ExplainJob(ctx context.Context, id *service.Identity, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error)
	Nodes(ctx context.Context, id *service.Identity, cluster, after string, limit int) ([]service.NodeRow, string, error)
	Node(ctx context.Context, id *service.Identity, cluster, name string) (*service.NodeRow, error)
	Plans(ctx context.Context, id *service.Identity, cluster, before string, limit int) ([]*sluicev1.Plan, error)
	GetPlan(ctx context.Context, id *service.Identity, req *sluicev1.GetPlanRequest) (*sluicev1.GetPlanResponse, error)
	GetSchedulerConfig(ctx context.Context, id *service.Identity, req *sluicev1.GetSchedulerConfigRequest) (*sluicev1.GetSchedulerConfigResponse, error)
}

var _ Source = (*service.UIReads)(nil)

// Options configure the UI.
type Options struct {
	// Source answers the reads. Required.
	Source Source
	// Open lets anyone read every cluster when the server does not authenticate (sluiced:
	// a loopback admin address, or --insecure); otherwise such a server's UI answers 403.
	Open bool
	// Refresh is how often pages refresh their live part; 0 means DefaultRefresh, a
	// negative value never.
	Refresh time.Duration
	// Logger receives a line per refused login and per failed read; nil discards them.
	Logger *slog.Logger
	// Now is the clock of ages; nil means time.Now.
	Now func() time.Time
}

// UI serves the web UI. It is safe for concurrent use.
type UI struct {
	src     Source
	open    bool
	refresh time.Duration
	log     *slog.Logger
	now     func() time.Time
	pages   *pages
	mux     *http.ServeMux
}

// New returns the UI. It panics when Options.Source is nil or the embedded templates do not
// parse (a build defect, which the package's tests catch).
func New(opts Options) *UI {
	if opts.Source == nil {
		panic("webui: Options.Source is required")
	}
	u := &UI{src: opts.Source, open: opts.Open, refresh: opts.Refresh, log: opts.Logger, now: opts.Now}
	if u.refresh == 0 {
		u.refresh = DefaultRefresh
	}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	if u.now == nil {
		u.now = time.Now
	}
	u.pages = mustParsePages()
	static, err := fs.Sub(assets, "static")
	if err != nil {
		panic(err)
	}
	m := http.NewServeMux()
	m.Handle("GET "+Path+"static/", http.StripPrefix(Path+"static/", http.FileServerFS(static)))
	m.HandleFunc("GET "+Path+"login", u.loginForm)
	m.HandleFunc("POST "+Path+"login", u.login)
	m.HandleFunc("POST "+Path+"logout", u.logout)
	m.HandleFunc("GET "+Path+"{$}", u.read(u.clustersPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/{$}", u.read(u.clusterPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/queues", u.read(u.queuesPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/jobs", u.read(u.jobsPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/jobs/{namespace}/{name}", u.read(u.jobPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/nodes", u.read(u.nodesPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/nodes/{name}", u.read(u.nodePage))
	m.HandleFunc("GET "+Path+"c/{cluster}/plans", u.read(u.plansPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/plans/{id}", u.read(u.planPage))
	m.HandleFunc("GET "+Path+"c/{cluster}/config", u.read(u.configPage))
	u.mux = m
	return u
}

// ServeHTTP serves the UI's paths (under Path), with headers that keep its pages out of
// frames, caches and other origins' scripts.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	u.mux.ServeHTTP(w, r)
}

// view is what a page handler returns: the template and its data (also the JSON answer).
type view struct {
	template string
	title    string
	cluster  string
	data     any
}

// page is a page handler: it reads as the identity and returns the page's view.
type page func(r *http.Request, id *service.Identity) (*view, error)

// read wraps a page handler with authentication and rendering: HTML, or the view's data as
// JSON with ?format=json.
func (u *UI) read(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := u.identify(w, r, true)
		if !ok {
			return
		}
		v, err := p(r, id)
		if err != nil {
			u.fail(w, r, id, err)
			return
		}
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v.data)
			return
		}
		u.render(w, http.StatusOK, v, id)
	}
}

// identify authenticates a request: its cookie's token, else its Authorization header or
// client certificate. On failure it answers (401 with the login form when form is set, else
// plain text; 429 over the rate limit; 403 when the server does not authenticate and the UI
// is not open) and returns false.
func (u *UI) identify(w http.ResponseWriter, r *http.Request, form bool) (*service.Identity, bool) {
	if !u.src.Authenticates() {
		if !u.open {
			http.Error(w, "the web UI is served without credentials only on a loopback admin address: "+
				"start sluiced with --tokens or --client-ca, or with --insecure", http.StatusForbidden)
			return nil, false
		}
		return nil, true
	}
	var token string
	if c, err := r.Cookie(CookieName); err == nil {
		token = c.Value
	}
	id, err := u.src.Admit(r, token)
	if err == nil {
		return id, true
	}
	code := httpStatus(err)
	u.log.Info("web UI request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "status", code, "reason", message(err))
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sluiced"`)
		if token != "" {
			clearCookie(w, r)
		}
	}
	if form && code == http.StatusUnauthorized {
		msg := ""
		if token != "" || r.Header.Get("Authorization") != "" {
			msg = message(err)
		}
		u.render(w, code, &view{template: "login", title: "Sign in", data: loginView{Next: r.URL.RequestURI(), Error: msg}}, nil)
		return nil, false
	}
	http.Error(w, message(err), code)
	return nil, false
}

// Guard puts h behind the UI's credentials: when the server authenticates, a request needs
// a valid token (cookie or bearer header) or client certificate, of any scope, else it gets
// 401. Without authentication h is served as it is.
func (u *UI) Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.src.Authenticates() {
			h.ServeHTTP(w, r)
			return
		}
		if _, ok := u.identify(w, r, false); ok {
			h.ServeHTTP(w, r)
		}
	})
}

// loginView is the login form's data.
type loginView struct {
	Next, Error string
}

// loginForm shows the login form (or, without authentication, goes to the UI).
func (u *UI) loginForm(w http.ResponseWriter, r *http.Request) {
	if !u.src.Authenticates() {
		http.Redirect(w, r, Path, http.StatusSeeOther)
		return
	}
	u.render(w, http.StatusOK, &view{template: "login", title: "Sign in", data: loginView{Next: safeNext(r.URL.Query().Get("next"))}}, nil)
}

// login checks the form's token as a bearer token and, when it is valid, keeps it in the
// cookie and goes to the page the form was shown for. A form posted from another origin is
// refused.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "login refused: the form was posted from another origin", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed form", http.StatusBadRequest)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	next := safeNext(r.PostForm.Get("next"))
	if !u.src.Authenticates() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if token == "" {
		u.render(w, http.StatusUnauthorized, &view{template: "login", title: "Sign in", data: loginView{Next: next, Error: "enter a token"}}, nil)
		return
	}
	id, err := u.src.Admit(r, token)
	if err != nil {
		code := httpStatus(err)
		u.log.Info("web UI login refused", "remote", r.RemoteAddr, "status", code, "reason", message(err))
		u.render(w, code, &view{template: "login", title: "Sign in", data: loginView{Next: next, Error: message(err)}}, nil)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/", MaxAge: int(cookieLifetime / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	u.log.Info("web UI login", "client", id.Name, "remote", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout clears the cookie.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "logout refused: the form was posted from another origin", http.StatusForbidden)
		return
	}
	clearCookie(w, r)
	http.Redirect(w, r, Path+"login", http.StatusSeeOther)
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// sameOrigin reports whether a POST came from a page of this server: the browser says so
// (Sec-Fetch-Site), or its Origin header names this host; a request with neither comes
// from a client that is not a browser, in which a cookie cannot be planted anyway.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	o, err := url.Parse(origin)
	return err == nil && o.Host == r.Host
}

// safeNext keeps a redirect target inside the UI.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Path) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Path
	}
	return next
}

// fail answers a failed read: its status mapped to HTTP, on the error page.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, id *service.Identity, err error) {
	code := httpStatus(err)
	if code >= 500 {
		u.log.Warn("web UI read failed", "path", r.URL.Path, "status", code, "error", err.Error())
	}
	if r.URL.Query().Get("format") == "json" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": message(err)})
		return
	}
	u.render(w, code, &view{template: "error", title: http.StatusText(code), cluster: r.PathValue("cluster"),
		data: errorView{Status: code, Message: message(err)}}, id)
}

// errorView is the error page's data.
type errorView struct {
	Status  int
	Message string
}

// httpStatus maps a read's error to an HTTP status.
func httpStatus(err error) int {
	if errors.Is(err, errBadRequest) {
		return http.StatusBadRequest
	}
	switch status.Code(err) {
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.InvalidArgument, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unavailable, codes.FailedPrecondition:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded, codes.Canceled:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// message is an error's text without the gRPC decoration.
func message(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// errBadRequest marks a malformed query parameter.
var errBadRequest = errors.New("bad request")
