package service

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
)

// Page sizes of the List calls.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// Lists a page token may be issued for.
const (
	pagedNodes    = "nodes"
	pagedQueues   = "queues"
	pagedJobs     = "jobs"
	pagedTasks    = "tasks"
	pagedClusters = "clusters"
)

// tokenVersion is the first byte of every page token, so that the format can change.
const tokenVersion byte = 2

// maxTokenLen bounds the page tokens the service reads: every part of one it issued is a
// checked name or filter, well within it.
const maxTokenLen = 4096

// pageScope is what a page token is bound to: the cluster ("" for ListClusters), the list and
// the request's filters. A token is only valid for the scope it was issued for.
type pageScope struct {
	cluster, list, filter string
}

// page is a List request's paging: how many items, where to start, and the scope of its
// tokens.
type page struct {
	size  int
	after string
	scope pageScope
}

// readPage checks a List request's page size and token (field "page_token"). A token that
// does not decode, or was issued for another cluster, list or filters, is refused.
func readPage(fe *fieldErrors, size int32, token string, scope pageScope) page {
	pg := page{size: pageSize(fe, size, defaultPageSize, maxPageSize), scope: scope}
	if token == "" {
		return pg
	}
	got, after, err := decodeToken(token)
	switch {
	case err != nil:
		fe.add("page_token", "invalid page token; pass the next_page_token of a previous response")
	case got.cluster != scope.cluster:
		fe.add("page_token", "the page token was issued for another cluster")
	case got.list != scope.list:
		fe.add("page_token", "the page token was issued for another list (%s), not this one (%s)", got.list, scope.list)
	case got.filter != scope.filter:
		fe.add("page_token", "the page token was issued for other filters; keep the filters between pages")
	default:
		pg.after = after
	}
	return pg
}

// token returns the next_page_token that continues after the key next ("" at the end).
func (pg page) token(next string) string {
	if next == "" {
		return ""
	}
	return encodeToken(pg.scope, next)
}

// encodeToken encodes a token: the version byte, then the cluster, list, filter and cursor,
// each as a uvarint length and its bytes, in unpadded URL-safe base64. Tokens are opaque to
// clients; the binding to the scope is what makes a token from elsewhere fail loudly rather
// than page through the wrong list.
func encodeToken(scope pageScope, after string) string {
	buf := []byte{tokenVersion}
	for _, part := range [...]string{scope.cluster, scope.list, scope.filter, after} {
		buf = binary.AppendUvarint(buf, uint64(len(part)))
		buf = append(buf, part...)
	}
	return base64.RawURLEncoding.EncodeToString(buf)
}

var errBadToken = errors.New("malformed page token")

// decodeToken decodes what encodeToken encoded; anything else (another version, a truncated
// or padded token, an empty cursor) is an error.
func decodeToken(token string) (pageScope, string, error) {
	if len(token) > maxTokenLen {
		return pageScope{}, "", errBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) == 0 || raw[0] != tokenVersion {
		return pageScope{}, "", errBadToken
	}
	raw = raw[1:]
	var parts [4]string
	for i := range parts {
		n, used := binary.Uvarint(raw)
		if used <= 0 || n > uint64(len(raw)-used) {
			return pageScope{}, "", errBadToken
		}
		parts[i] = string(raw[used : used+int(n)])
		raw = raw[used+int(n):]
	}
	if len(raw) != 0 || parts[3] == "" {
		return pageScope{}, "", errBadToken
	}
	return pageScope{cluster: parts[0], list: parts[1], filter: parts[2]}, parts[3], nil
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
