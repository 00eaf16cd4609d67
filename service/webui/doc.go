// Package webui is sluiced's read-only web UI for operators, served on the admin listener
// under /ui/: clusters (revision, objects, jobs by phase, utilization per resource), queues
// (the hierarchy with weight, capability, guarantee, deserved, allocated, share and
// overused, drawn as bars), jobs (searched, filtered and paged on the server; a job's page
// shows its tasks and why it is pending), nodes (utilization as bars and a heat map,
// devices, labels, taints, tasks; paged), plans (recent plans, their decisions with the
// preemptor and the action of each eviction, and a commit's rejections) and the scheduler
// configuration.
//
// Pages are rendered on the server with html/template from assets embedded in the binary
// (no build step, nothing fetched at run time); a small script (static/app.js) refreshes the
// page's live part every few seconds without a reload. Every page is one bounded read: lists
// are paged on the server, so a page costs the same at 10 nodes as at 10,000. Every page is
// also served as JSON with ?format=json.
//
// Reads go through the service's own read paths (Source, which service.UIReads implements):
// the API's handlers, the policy of the gRPC method each read stands for, and its read gate
// (linearizable reads on a replicated store). So a credential for one cluster never shows
// another, and the scheduler configuration needs an admin token, as in the API.
//
// Credentials: when the server authenticates (--tokens, --client-ca), every page needs a
// bearer token, given once in the login form and kept in an HttpOnly, SameSite=Strict
// cookie (Secure under TLS), or sent as "Authorization: Bearer TOKEN", or a verified client
// certificate. Guard puts other admin handlers (/raft, /metrics) behind the same
// credentials. Nothing in the UI writes: its only POSTs set and clear the cookie.
package webui
