package service

import (
	"errors"
	"net/http"
	"net/http/pprof"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// ProfilesPath is where Profiles is mounted on the admin listener.
const ProfilesPath = "/debug/pprof/"

// Profiles returns the handler of ProfilesPath: Go's profiles (net/http/pprof's index, and
// heap, goroutine, allocs, block, mutex, threadcreate, profile (CPU), trace, cmdline and
// symbol). They show the process's internals and a CPU profile or trace costs CPU while it
// runs, so they are an admin's: with auth, a request needs an admin identity's bearer token
// ("Authorization: Bearer TOKEN") or verified client certificate, and gets 401 without a
// valid credential and 403 with one that is not an admin's. Without auth, open says whether
// anyone may have them (sluiced opens them only on a loopback admin address or with
// --insecure); otherwise every request gets 403.
func Profiles(auth *Authenticator, open bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(ProfilesPath, pprof.Index)
	mux.HandleFunc(ProfilesPath+"cmdline", pprof.Cmdline)
	mux.HandleFunc(ProfilesPath+"profile", pprof.Profile)
	mux.HandleFunc(ProfilesPath+"symbol", pprof.Symbol)
	mux.HandleFunc(ProfilesPath+"trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, msg := profileAccess(auth, open, r); code != 0 {
			if code == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sluiced"`)
			}
			http.Error(w, msg, code)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// profileAccess returns 0 when the request may have the profiles, else the HTTP status and
// message of the refusal.
func profileAccess(auth *Authenticator, open bool, r *http.Request) (int, string) {
	if auth == nil {
		if open {
			return 0, ""
		}
		return http.StatusForbidden, "profiles are served without credentials only on a loopback admin address: " +
			"start sluiced with --tokens or --client-ca, or with --insecure"
	}
	id, err := HTTPIdentity(auth, r)
	if err != nil {
		msg := err.Error()
		if st, ok := status.FromError(err); ok {
			msg = st.Message()
		}
		return http.StatusUnauthorized, msg
	}
	if !id.Admin {
		return http.StatusForbidden, "profiles need an admin token; " + id.Name + " is not one"
	}
	return 0, ""
}

// HTTPIdentity authenticates an HTTP request with the same credentials as the gRPC API: the
// bearer token of its Authorization header, else its verified client certificate (on a TLS
// listener that asks for one).
func HTTPIdentity(auth *Authenticator, r *http.Request) (*Identity, error) {
	if auth == nil {
		return nil, errors.New("the server does not authenticate")
	}
	md := metadata.MD{}
	if h := r.Header.Values("Authorization"); len(h) > 0 {
		md["authorization"] = h
	}
	ctx := metadata.NewIncomingContext(r.Context(), md)
	if r.TLS != nil {
		ctx = peer.NewContext(ctx, &peer.Peer{AuthInfo: credentials.TLSInfo{State: *r.TLS}})
	}
	return auth.Authenticate(ctx)
}
