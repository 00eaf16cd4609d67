package service

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProfilesAccess(t *testing.T) {
	auth, err := NewAuthenticator([]TokenEntry{
		{Name: "ops", Token: "ops-token", Clusters: []string{"*"}, Admin: true},
		{Name: "rm", Token: "rm-token", Clusters: []string{"c1"}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		h      http.Handler
		token  string
		want   int
		bearer bool // a WWW-Authenticate: Bearer challenge
	}{
		{"admin", Profiles(auth, false), "ops-token", 200, false},
		{"not an admin", Profiles(auth, true), "rm-token", 403, false},
		{"no token", Profiles(auth, true), "", 401, true},
		{"wrong token", Profiles(auth, true), "nope", 401, true},
		{"open without credentials", Profiles(nil, true), "", 200, false},
		{"closed without credentials", Profiles(nil, false), "", 403, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, ProfilesPath+"goroutine?debug=1", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			tc.h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body.String())
			}
			if got := rec.Header().Get("WWW-Authenticate") != ""; got != tc.bearer {
				t.Fatalf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			}
			if tc.want == 200 && rec.Body.Len() == 0 {
				t.Fatal("empty profile")
			}
		})
	}
}
