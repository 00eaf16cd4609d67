package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// Why a writer reads through an overlay.
//
// memdb answers a read in a write transaction, on an index the transaction has modified, with
// a clone of that index's radix transaction, and cloning drops the radix transaction's cache of
// the nodes it has already copied. A writer that looked an object up before each upsert (to
// merge server-owned fields, to count new objects, for undo) made every following insert copy
// its whole path again, in every index: most of the garbage of a large batch. So the writer
// serves its point reads by key itself: the rows it wrote or deleted are in the overlay, and
// every other key reads the database as the transaction found it (a read transaction on the
// same root, which no clone touches). Scans by prefix (a job's tasks, a node's tasks, ...) are
// rare and still read the write transaction.

// tableKey names a row of an object table within the writer's cluster.
type tableKey struct {
	table, key string
}

// overlay is what a write transaction changed, for reading by key.
type overlay struct {
	// base reads the database as the write transaction found it.
	base *memdb.Txn
	// rows holds the row of every key written or deleted since (nil: deleted).
	rows map[tableKey]keyed
	// cleared is set when everything of the cluster was deleted (deleteAll): base then holds
	// nothing the transaction still has.
	cleared bool
	// arg holds the key of the lookup in base, in a buffer reused from lookup to lookup;
	// args is the argument list that holds it (memdb takes variadic arguments: a list made
	// per lookup would be an allocation per lookup).
	arg  *encodedKey
	args []any
}

// newOverlay returns an empty overlay over base.
func newOverlay(base *memdb.Txn) overlay {
	arg := &encodedKey{}
	return overlay{base: base, arg: arg, args: []any{arg}}
}

// lookup returns the row the write transaction holds in table under key, or nil.
func (o *overlay) lookup(table, cluster, key string) (keyed, error) {
	if r, ok := o.rows[tableKey{table, key}]; ok {
		return r, nil
	}
	if o.cleared {
		return nil, nil
	}
	o.arg.b = appendKey(o.arg.b[:0], cluster, key)
	r, err := o.base.First(table, indexID, o.args...)
	if err != nil {
		return nil, fmt.Errorf("state: reading %s %q: %w", table, key, err)
	}
	if r == nil {
		return nil, nil
	}
	return r.(keyed), nil
}

// put records that the transaction now holds r (nil: nothing) in table under key.
func (o *overlay) put(table, key string, r keyed) {
	if r == nil && o.cleared {
		// Absent either way; keeps deleteAll from filling the map.
		delete(o.rows, tableKey{table, key})
		return
	}
	if o.rows == nil {
		o.rows = make(map[tableKey]keyed)
	}
	o.rows[tableKey{table, key}] = r
}

// firstByID reads the row of table with key in txn, or nil.
func firstByID(txn *memdb.Txn, table, cluster, key string) (keyed, error) {
	o, err := txn.First(table, indexID, cluster, key)
	if err != nil {
		return nil, fmt.Errorf("state: reading %s %q: %w", table, key, err)
	}
	if o == nil {
		return nil, nil
	}
	return o.(keyed), nil
}
