package extender

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "extender"

// Argument names, as Volcano spells them.
const (
	ArgURLPrefix          = "extender.urlPrefix"
	ArgHTTPTimeout        = "extender.httpTimeout"
	ArgOnSessionOpenVerb  = "extender.onSessionOpenVerb"
	ArgOnSessionCloseVerb = "extender.onSessionCloseVerb"
	ArgPredicateVerb      = "extender.predicateVerb"
	ArgPrioritizeVerb     = "extender.prioritizeVerb"
	ArgPreemptableVerb    = "extender.preemptableVerb"
	ArgReclaimableVerb    = "extender.reclaimableVerb"
	ArgQueueOverusedVerb  = "extender.queueOverusedVerb"
	ArgJobEnqueueableVerb = "extender.jobEnqueueableVerb"
	ArgJobReadyVerb       = "extender.jobReadyVerb"
	ArgAllocateFunc       = "extender.allocateFunc"
	ArgDeallocateFunc     = "extender.deallocateFunc"
	ArgIgnorable          = "extender.ignorable"
	ArgManagedResources   = "extender.managedResources"

	// ArgAllocateFuncVerb and ArgDeallocateFuncVerb are the spellings of Volcano's plugin
	// documentation, accepted as aliases.
	ArgAllocateFuncVerb   = "extender.allocateFuncVerb"
	ArgDeallocateFuncVerb = "extender.deallocateFuncVerb"
)

// DefaultHTTPTimeout is Volcano's default extender.httpTimeout.
const DefaultHTTPTimeout = time.Second

// config is the parsed arguments.
type config struct {
	urlPrefix string
	timeout   time.Duration
	ignorable bool
	managed   []string

	onSessionOpen, onSessionClose           string
	predicate, prioritize                   string
	preemptable, reclaimable                string
	queueOverused, jobEnqueueable, jobReady string
	allocate, deallocate                    string
}

// verbArgs lists every verb argument with where its value goes.
func (c *config) verbArgs() []struct {
	key string
	dst *string
} {
	return []struct {
		key string
		dst *string
	}{
		{ArgOnSessionOpenVerb, &c.onSessionOpen}, {ArgOnSessionCloseVerb, &c.onSessionClose},
		{ArgPredicateVerb, &c.predicate}, {ArgPrioritizeVerb, &c.prioritize},
		{ArgPreemptableVerb, &c.preemptable}, {ArgReclaimableVerb, &c.reclaimable},
		{ArgQueueOverusedVerb, &c.queueOverused}, {ArgJobEnqueueableVerb, &c.jobEnqueueable},
		{ArgJobReadyVerb, &c.jobReady},
		{ArgAllocateFunc, &c.allocate}, {ArgDeallocateFunc, &c.deallocate},
	}
}

// known lists every accepted argument name.
var known = map[string]bool{
	ArgURLPrefix: true, ArgHTTPTimeout: true, ArgIgnorable: true, ArgManagedResources: true,
	ArgOnSessionOpenVerb: true, ArgOnSessionCloseVerb: true, ArgPredicateVerb: true,
	ArgPrioritizeVerb: true, ArgPreemptableVerb: true, ArgReclaimableVerb: true,
	ArgQueueOverusedVerb: true, ArgJobEnqueueableVerb: true, ArgJobReadyVerb: true,
	ArgAllocateFunc: true, ArgDeallocateFunc: true, ArgAllocateFuncVerb: true, ArgDeallocateFuncVerb: true,
}

// New builds the plugin for one session; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	cfg, err := parse(args)
	if err != nil {
		return nil, err
	}
	return &plugin{cfg: cfg, client: &http.Client{Timeout: cfg.timeout}}, nil
}

func parse(args conf.Arguments) (*config, error) {
	c := &config{}
	for _, k := range args.Keys() {
		if strings.HasPrefix(k, "extender.") && !known[k] {
			return nil, fmt.Errorf("argument %q: unknown extender argument", k)
		}
	}
	var err error
	if c.urlPrefix, err = args.String(ArgURLPrefix, ""); err != nil {
		return nil, err
	}
	c.urlPrefix = strings.TrimSpace(c.urlPrefix)
	if c.timeout, err = args.Duration(ArgHTTPTimeout, DefaultHTTPTimeout); err != nil {
		return nil, err
	}
	if c.timeout <= 0 {
		return nil, fmt.Errorf("argument %q: want a positive duration, got %s", ArgHTTPTimeout, c.timeout)
	}
	if c.ignorable, err = args.Bool(ArgIgnorable, false); err != nil {
		return nil, err
	}
	if c.managed, err = stringList(args, ArgManagedResources); err != nil {
		return nil, err
	}
	anyVerb := false
	for _, v := range c.verbArgs() {
		if *v.dst, err = verb(args, v.key); err != nil {
			return nil, err
		}
		anyVerb = anyVerb || *v.dst != ""
	}
	for _, alias := range []struct {
		key, canonical string
		dst            *string
	}{{ArgAllocateFuncVerb, ArgAllocateFunc, &c.allocate}, {ArgDeallocateFuncVerb, ArgDeallocateFunc, &c.deallocate}} {
		v, err := verb(args, alias.key)
		if err != nil {
			return nil, err
		}
		switch {
		case v == "":
		case *alias.dst == "":
			*alias.dst = v
			anyVerb = true
		case *alias.dst != v:
			return nil, fmt.Errorf("argument %q: %q disagrees with %q (%q)", alias.key, v, alias.canonical, *alias.dst)
		}
	}
	if c.urlPrefix == "" {
		if anyVerb {
			return nil, fmt.Errorf("argument %q: required when a verb is set", ArgURLPrefix)
		}
		return c, nil
	}
	u, err := url.Parse(c.urlPrefix)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("argument %q: want an http:// or https:// URL, got %q", ArgURLPrefix, c.urlPrefix)
	}
	return c, nil
}

// verb reads a verb: a path segment appended to the URL prefix, without spaces.
func verb(args conf.Arguments, key string) (string, error) {
	v, err := args.String(key, "")
	if err != nil {
		return "", err
	}
	v = strings.Trim(strings.TrimSpace(v), "/")
	if strings.ContainsAny(v, " \t\n?#") {
		return "", fmt.Errorf("argument %q: want a URL path, got %q", key, v)
	}
	return v, nil
}

// stringList reads a list of names given as a YAML list of strings or as one comma-separated
// string; empty names are dropped.
func stringList(args conf.Arguments, key string) ([]string, error) {
	raw, ok := args[key]
	if !ok || raw == nil {
		return nil, nil
	}
	var items []string
	switch v := raw.(type) {
	case string:
		items = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("argument %q: want a list of resource names, got element %v", key, e)
			}
			items = append(items, s)
		}
	case []string:
		items = v
	default:
		return nil, fmt.Errorf("argument %q: want a list of resource names or a comma-separated string, got %v", key, raw)
	}
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// plugin is one session's extender.
type plugin struct {
	cfg    *config
	client *http.Client
	ssn    *framework.Session
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "extender".
func (p *plugin) Name() string { return Name }

// OnSessionOpen calls the onSessionOpen verb and registers a callback for every configured
// verb. As in Volcano, when the onSessionOpen call fails and the extender is not ignorable,
// no callback is registered for this cycle.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	c := p.cfg
	if c.onSessionOpen != "" {
		if err := p.send(c.onSessionOpen, newSessionRequest(ssn, true), nil); err != nil {
			if !c.ignorable {
				ssn.Log.Error("extender: onSessionOpen failed; extender off for this cycle", "err", err)
				return
			}
			ssn.Log.Warn("extender: onSessionOpen failed, ignored", "err", err)
		}
	}
	if c.predicate != "" {
		ssn.AddPredicateFn(Name, p.predicateFn)
	}
	if c.prioritize != "" {
		ssn.AddBatchNodeOrderFn(Name, p.prioritizeFn)
	}
	if c.preemptable != "" {
		ssn.AddPreemptableFn(Name, p.evictableFn(c.preemptable))
	}
	if c.reclaimable != "" {
		ssn.AddReclaimableFn(Name, p.evictableFn(c.reclaimable))
	}
	if c.jobEnqueueable != "" {
		ssn.AddJobEnqueueableFn(Name, p.jobEnqueueableFn)
	}
	if c.queueOverused != "" {
		ssn.AddOverusedFn(Name, p.queueOverusedFn)
	}
	if c.jobReady != "" {
		ssn.AddJobReadyFn(Name, p.jobReadyFn)
	}
	if c.allocate != "" || c.deallocate != "" {
		h := &framework.EventHandler{}
		if c.allocate != "" {
			h.AllocateFunc = func(ev *framework.Event) { p.notify(c.allocate, ev) }
		}
		if c.deallocate != "" {
			h.DeallocateFunc = func(ev *framework.Event) { p.notify(c.deallocate, ev) }
		}
		ssn.AddEventHandler(h)
	}
}

// OnSessionClose calls the onSessionClose verb; a failure is only logged.
func (p *plugin) OnSessionClose(ssn *framework.Session) {
	if p.cfg.onSessionClose == "" {
		return
	}
	if err := p.send(p.cfg.onSessionClose, newSessionRequest(ssn, false), nil); err != nil {
		ssn.Log.Warn("extender: onSessionClose failed", "err", err)
	}
}

// interested reports whether the task requests one of the managed resources (every task does
// when none are configured): a resource amount or a device request of that name.
func (p *plugin) interested(t *api.TaskInfo) bool {
	if len(p.cfg.managed) == 0 {
		return true
	}
	for _, name := range p.cfg.managed {
		if t.Resreq != nil && t.Resreq.Get(name) > 0 {
			return true
		}
		if t.Spec != nil {
			for _, d := range t.Spec.Devices {
				if d.Type == name {
					return true
				}
			}
		}
	}
	return false
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)
