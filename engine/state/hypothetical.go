package state

// Hypothetical returns a view of a cluster as it would be after a batch, without changing
// the store: the batch is checked exactly as Apply checks it, then applied to a private copy
// of the database (memdb's Snapshot shares every tree and copies only the paths the batch
// writes), which nothing else sees and which goes away with the view. Writers are never
// blocked, and with a Replicator the batch never reaches the log. The view keeps the store's
// revision (the one it was derived from). A refused batch yields the *ValidationError Apply
// would give; a ReplaceAll batch is refused (a what-if adds to the cluster).
func (s *Store) Hypothetical(cluster string, b Batch) (*Snapshot, error) {
	if b.ReplaceAll {
		return nil, &ValidationError{Index: -1, Field: "replace_all", Msg: "a hypothetical batch adds to the cluster's state: replace_all is not allowed"}
	}
	db := s.load().Snapshot()
	rev := revision(db.Txn(false), cluster)
	priv := &Store{}
	priv.db.Store(db)
	if _, err := priv.apply(cluster, b, true); err != nil {
		return nil, err
	}
	snap := priv.Snapshot(cluster)
	snap.rev = rev
	return snap, nil
}
