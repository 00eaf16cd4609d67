package service

import (
	"encoding/base64"
	"strings"
)

// Page sizes of the List calls.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// tokenVersion starts every page token, so that the format can change.
const tokenVersion = "s1"

// page is a List request's paging: how many items, where to start, and the filters the
// token was issued for (a token is only valid with the same filters).
type page struct {
	size   int
	after  string
	filter string
}

// readPage checks a List request's page size and token. filter identifies the request's
// filters; a token issued for other filters is refused.
func readPage(fe *fieldErrors, size int32, token, filter string) page {
	checkPageSize(fe, size)
	pg := page{size: int(size), filter: filter}
	switch {
	case pg.size <= 0:
		pg.size = defaultPageSize
	case pg.size > maxPageSize:
		pg.size = maxPageSize
	}
	if token == "" {
		return pg
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	parts := strings.Split(string(raw), "\x00")
	if err != nil || len(parts) != 3 || parts[0] != tokenVersion || parts[2] == "" {
		fe.add("page_token", "invalid page token; pass the next_page_token of a previous response")
		return pg
	}
	if parts[1] != filter {
		fe.add("page_token", "the page token was issued for other filters; keep the filters between pages")
		return pg
	}
	pg.after = parts[2]
	return pg
}

// token returns the next_page_token that continues after the key next ("" at the end).
func (pg page) token(next string) string {
	if next == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(tokenVersion + "\x00" + pg.filter + "\x00" + next))
}

// filterKey joins a request's filter values into one string for its page tokens. Names never
// contain control characters, so the separator is unambiguous.
func filterKey(values ...string) string { return strings.Join(values, "\x01") }

// namespacePrefix is the key prefix of a namespace's jobs or tasks ("" for every namespace).
func namespacePrefix(ns string) string {
	if ns == "" {
		return ""
	}
	return ns + "/"
}

// pageOf reads one page through a store lister (which lists in key order after a cursor, with
// its own filters) and keeps only keys under prefix. Keys under a prefix are contiguous, so
// the page ends at the first key past it. It returns the items and the key to continue after,
// "" when nothing follows.
func pageOf[T any](list func(after string, limit int) ([]*T, string), keyOf func(*T) string, prefix string, pg page) ([]*T, string) {
	after := pg.after
	if prefix != "" && after < prefix {
		after = prefix
	}
	items, _ := list(after, pg.size+1)
	out := make([]*T, 0, min(len(items), pg.size))
	for _, it := range items {
		if prefix != "" && !strings.HasPrefix(keyOf(it), prefix) {
			return out, ""
		}
		if len(out) == pg.size {
			return out, keyOf(out[len(out)-1])
		}
		out = append(out, it)
	}
	return out, ""
}
